/**
 * How many of the ascending `sorted` values are at most `value`: the index of the first one above
 * it (numpy's searchsorted with side "right").
 */
export function countAtMost(sorted: ArrayLike<number>, value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid] <= value) low = mid + 1;
    else high = mid;
  }
  return low;
}
