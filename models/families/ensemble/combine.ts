import type { Combination, EnsembleIntervals } from '../../contract/model-interface.ts';

/**
 * How an ensemble turns its members' forecasts into one: the weights, learned from the members'
 * errors in rolling-origin windows of the series' own history, and the combination itself.
 * Pure numerics, shared by the ensemble model and its benchmark.
 */

/**
 * `mean`: equal weights. `median`: the members' median at each step (robust to one member gone
 * wrong). `weighted`: weights inversely proportional to each member's error variance over the
 * validation windows (Bates and Granger's combination), the long-series default. The variance is
 * read as the squared mean absolute error, not the mean squared error: one window's spike then
 * does not decide the weights (docs/decisions/083-ensemble-weights-from-absolute-errors.md).
 * `pooled`: the same inverse, from each member's scaled error over the last windows of the
 * request's series of one season and horizon (pooled-weights.ts), the short-series default. Why
 * each profile combines as it does: docs/decisions/004-ensemble-profile-per-series.md.
 */
export const COMBINATIONS: readonly Combination[] = ['mean', 'median', 'weighted', 'pooled'];

/** Where the quantiles come from: the combination's window errors, the members' own quantiles (memberQuantiles), or errors pooled across series (pooled-calibration.ts). */
export const ENSEMBLE_INTERVALS: readonly EnsembleIntervals[] = ['conformal', 'members', 'pooled'];

/**
 * Each member's error variance over the windows' steps, read robustly: its mean absolute error,
 * squared (windows[member][window][step] against actual[window][step]).
 */
export function windowErrors(windows: readonly (readonly Float64Array[])[], actual: readonly Float64Array[]): number[] {
  return windows.map((byWindow) => {
    let sum = 0;
    let count = 0;
    byWindow.forEach((forecast, w) =>
      forecast.forEach((v, j) => {
        sum += Math.abs(v - actual[w][j]);
        count++;
      }),
    );
    return count > 0 ? (sum / count) ** 2 : NaN;
  });
}

/** The members' weights (summing to 1) for a combination, from their window errors. */
export function memberWeights(combination: Combination, errors: readonly number[]): number[] {
  const k = errors.length;
  const fromErrors = combination === 'weighted' || combination === 'pooled';
  if (!fromErrors || errors.some((e) => !Number.isFinite(e))) return errors.map(() => 1 / k);
  // A member that was exact in every window takes all the weight (shared among such members).
  const exact = errors.filter((e) => e === 0).length;
  if (exact > 0) return errors.map((e) => (e === 0 ? 1 / exact : 0));
  const inverse = errors.map((e) => 1 / e);
  const total = inverse.reduce((a, b) => a + b, 0);
  return inverse.map((v) => v / total);
}

/** The combined forecast of members' forecasts of one horizon (same length each). */
export function combine(combination: Combination, forecasts: readonly Float64Array[], weights: readonly number[]): Float64Array {
  const horizon = forecasts[0].length;
  const out = new Float64Array(horizon);
  if (combination === 'median') {
    const column = new Float64Array(forecasts.length);
    for (let j = 0; j < horizon; j++) {
      forecasts.forEach((f, k) => (column[k] = f[j]));
      column.sort();
      const mid = column.length >> 1;
      out[j] = column.length % 2 === 1 ? column[mid] : (column[mid - 1] + column[mid]) / 2;
    }
    return out;
  }
  forecasts.forEach((f, k) => f.forEach((v, j) => (out[j] += weights[k] * v)));
  return out;
}

/**
 * Quantiles from the members' own: at each level and step, the combined mean plus the weighted
 * mean of each member's offset from its own mean (with equal weights, the mean of the members'
 * quantiles shifted onto the combined mean). Every member has the same levels (the task's), at
 * least one member is given. Levels stay ordered: each member's offsets are, and the weights are
 * not negative.
 */
export function memberQuantiles(
  mean: Float64Array,
  members: readonly { readonly mean: ArrayLike<number>; readonly quantiles: readonly ArrayLike<number>[] }[],
  weights: readonly number[],
): Float64Array[] {
  return members[0].quantiles.map((_, q) => {
    const out = Float64Array.from(mean);
    members.forEach((m, k) => {
      for (let j = 0; j < out.length; j++) out[j] += weights[k] * (m.quantiles[q][j] - m.mean[j]);
    });
    return out;
  });
}
