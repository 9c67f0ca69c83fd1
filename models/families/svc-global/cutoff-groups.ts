/**
 * Which model each task of a request is forecast by. A task may not see any series past its own
 * creation time, so a model trained up to time c serves only tasks created at c or later, and a
 * task served by a model trained long before its own time forecasts with stale knowledge: rows
 * of every series between the two times are missing from its training. With at most `k` models,
 * the cutoffs are chosen to make the tasks' staleness (the time from their model's cutoff to
 * their own, summed over tasks) least. Spreading the cutoffs evenly over the distinct dates
 * instead let one old series hold back most of a request: a model trained before any other
 * series began served every task created before the next chosen date.
 */

export interface CutoffGroup {
  /** Latest wall-clock time the group's training may see: its earliest task's creation time. */
  readonly cutoff: number;
  readonly tasks: number[];
}

/** Groups tasks by creation time into at most `k` groups, each trained up to its earliest task's time. */
export function groupByCutoff(cutoffs: readonly number[], k: number): CutoffGroup[] {
  const distinct = [...new Set(cutoffs)].sort((a, b) => a - b);
  const count = new Map<number, number>();
  for (const c of cutoffs) count.set(c, (count.get(c) ?? 0) + 1);
  const starts = leastStaleStarts(
    distinct.map((c) => c - distinct[0]),
    distinct.map((c) => count.get(c)!),
    Math.max(1, Math.min(k, distinct.length)),
  );
  const groups = starts.map((s) => ({ cutoff: distinct[s], tasks: [] as number[] }));
  cutoffs.forEach((c, i) => {
    let g = 0;
    while (g + 1 < groups.length && groups[g + 1].cutoff <= c) g++;
    groups[g].tasks.push(i);
  });
  return groups;
}

/**
 * The first index of each of `k` consecutive groups of sorted times (weights: tasks per time)
 * whose summed staleness, weight x (time - the group's first time), is least. Dynamic programming
 * over group ends; where an optimal split of the first b times puts its last group at a, a larger
 * b never puts it earlier (the cost is Monge), so each layer is solved by divide and conquer in
 * O(D log D) for D distinct times.
 */
function leastStaleStarts(times: readonly number[], weights: readonly number[], k: number): number[] {
  const d = times.length;
  const w = new Float64Array(d + 1);
  const wt = new Float64Array(d + 1);
  for (let i = 0; i < d; i++) {
    w[i + 1] = w[i] + weights[i];
    wt[i + 1] = wt[i] + weights[i] * times[i];
  }
  // Staleness of one group holding times a .. b - 1.
  const cost = (a: number, b: number) => wt[b] - wt[a] - times[a] * (w[b] - w[a]);
  // best[b]: least staleness of the first b times in the groups so far; from[g][b]: the last group's start.
  let best = Float64Array.from({ length: d + 1 }, (_, b) => (b === 0 ? 0 : cost(0, b)));
  const from: Int32Array[] = [new Int32Array(d + 1)];
  for (let g = 1; g < k; g++) {
    const next = new Float64Array(d + 1).fill(Infinity);
    const arg = new Int32Array(d + 1);
    // Solve b in [lo, hi] knowing the optimal start lies in [optLo, optHi].
    const solve = (lo: number, hi: number, optLo: number, optHi: number): void => {
      if (lo > hi) return;
      const b = (lo + hi) >> 1;
      let bestA = optLo;
      for (let a = optLo; a <= Math.min(optHi, b - 1); a++) {
        const value = best[a] + cost(a, b);
        if (value < next[b]) {
          next[b] = value;
          bestA = a;
        }
      }
      arg[b] = bestA;
      solve(lo, b - 1, optLo, bestA);
      solve(b + 1, hi, bestA, optHi);
    };
    solve(g + 1, d, g, d - 1);
    best = next;
    from.push(arg);
  }
  const starts: number[] = [];
  let end = d;
  for (let g = k - 1; g >= 1; g--) {
    end = from[g][end];
    starts.push(end);
  }
  starts.push(0);
  return starts.reverse();
}
