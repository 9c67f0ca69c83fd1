/**
 * Quantiles of sorted samples, interpolated between the order statistics around their position,
 * shared by the models that turn samples into quantiles (simulated paths, residuals, conformity
 * scores).
 *
 * `linear` reads position q (N - 1), numpy's default. `unbiased` reads q (N + 1) - 1, where the
 * k-th of N exchangeable values is exceeded by a new one with probability 1 - k / (N + 1): the
 * finite-sample rule of split conformal prediction, interpolated and clamped to the extremes.
 */
export type QuantilePositions = 'linear' | 'unbiased';

/** The q-quantile of sorted values; 0 when there are none. */
export function sortedQuantile(sorted: Float64Array, q: number, positions: QuantilePositions = 'linear'): number {
  if (sorted.length === 0) return 0;
  const last = sorted.length - 1;
  const raw = positions === 'linear' ? q * last : q * (sorted.length + 1) - 1;
  const position = Math.min(Math.max(raw, 0), last);
  const below = Math.floor(position);
  const above = Math.min(below + 1, last);
  return sorted[below] + (position - below) * (sorted[above] - sorted[below]);
}
