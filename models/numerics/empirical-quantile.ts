/**
 * Quantiles of sorted samples, interpolated between the order statistics around their position
 * q (N - 1) (numpy's default), shared by the models that turn samples into quantiles (simulated
 * paths, residuals, statsforecast's conformal rule).
 */

/** The q-quantile of sorted values; 0 when there are none. */
export function sortedQuantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const last = sorted.length - 1;
  const position = Math.min(Math.max(q * last, 0), last);
  const below = Math.floor(position);
  const above = Math.min(below + 1, last);
  return sorted[below] + (position - below) * (sorted[above] - sorted[below]);
}
