/**
 * Conformal quantiles for any local model, as statsforecast's ConformalIntervals compute them but
 * for the quantile rule. The model is refitted at rolling origins inside the history (the last h
 * steps held out, then the h before them, ...); each window's absolute errors at steps 1..h are
 * the scores. The central interval of coverage p is the mean plus or minus the absolute error at
 * rank p (N + 1) of N windows (`unbiased`); `linear` keeps the reference's rule. A short history
 * uses as many windows as fit, at least 2. Why this rank: docs/decisions/007-conformal-quantile-rank.md.
 */
import { sortedQuantile } from './empirical-quantile.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask } from '../contract/model-interface.ts';

/** How scores become quantiles: statsforecast's rule (`linear`) or the service's (`unbiased`, above). */
export type ConformalRule = 'linear' | 'unbiased';

/**
 * The model's mean forecast with conformal quantiles at the task's levels. `forecast` is the
 * model's own; it is called once per window and once on the whole history.
 */
export function conformalForecast(
  forecast: (task: ForecastTask) => ForecastOutput,
  task: ForecastTask,
  requestedWindows: number,
  positions: ConformalRule = 'unbiased',
): ForecastOutput {
  const { history, horizon } = task;
  const n = history.length;
  const windows = Math.min(requestedWindows, Math.floor((n - 1) / horizon));
  if (windows < 2) {
    throw new ModelInputError(
      `conformal quantiles over ${horizon}-step windows need at least ${2 * horizon + 1} observations of history (two windows and one to train on); got ${n}`,
    );
  }
  // Per horizon step, every window's absolute error.
  const scores = Array.from({ length: horizon }, () => new Float64Array(windows));
  for (let w = 0; w < windows; w++) {
    const cut = n - (windows - w) * horizon;
    // Windows are always refitted: a kept fit may have seen data past a window's cut.
    const { mean } = forecast({ ...task, history: history.subarray(0, cut), quantiles: [], conformal: undefined, refit: undefined });
    for (let j = 0; j < horizon; j++) scores[j][w] = Math.abs(mean[j] - history[cut + j]);
  }
  const { mean } = forecast({ ...task, quantiles: [], conformal: undefined });
  return { mean, quantiles: conformalQuantiles(mean, scores, task.quantiles, positions) };
}

/**
 * Quantiles at `levels` around a mean forecast from conformity scores: per horizon step, the
 * absolute errors of the rolling-origin windows, read as the symmetric set {-score, +score}.
 */
export function conformalQuantiles(
  mean: Float64Array,
  scores: readonly Float64Array[],
  levels: readonly number[],
  positions: ConformalRule = 'unbiased',
): Float64Array[] {
  if (positions === 'unbiased') {
    const sorted = scores.map((s) => Float64Array.from(s).sort());
    return levels.map((level) => mean.map((m, j) => m + symmetricOffset(sorted[j], level)));
  }
  const offsets = scores.map((s) => {
    const both = new Float64Array(2 * s.length);
    s.forEach((score, w) => {
      both[w] = -score;
      both[s.length + w] = score;
    });
    return both.sort();
  });
  return levels.map((level) => mean.map((m, j) => m + sortedQuantile(offsets[j], level)));
}

/**
 * The offset from the mean of the `level` quantile: the bound of the central interval of coverage
 * |2 level - 1|, whose half-width is the absolute error at rank coverage (N + 1) among the N sorted
 * ones (rank 0 being 0), interpolated and clamped to the largest.
 */
export function symmetricOffset(sortedAbs: Float64Array, level: number): number {
  const n = sortedAbs.length;
  const rank = Math.min(Math.abs(2 * level - 1) * (n + 1), n);
  const below = Math.floor(rank);
  const at = (k: number) => (k === 0 ? 0 : sortedAbs[k - 1]);
  const width = below === rank ? at(below) : at(below) + (rank - below) * (at(below + 1) - at(below));
  return level < 0.5 ? -width : width;
}
