/**
 * Conformal quantiles for any local model, as statsforecast's ConformalIntervals (its
 * "conformal distribution") compute them, with one correction: the model is refitted at rolling
 * origins inside the history (the last h steps held out, then the h before them, ...), each
 * window's absolute errors at horizon steps 1..h are the conformity scores, and at each step the
 * quantiles are those of the symmetric set {mean - score, mean + score} over the windows. No
 * distributional assumption: the spread is what the model's own errors were on this series.
 *
 * The correction: with few windows, the reference's linear quantile (position tau (N - 1) among N
 * sorted values) under-covers: the k-th smallest of N exchangeable errors is exceeded by a new
 * one with probability 1 - k / (N + 1), so its 80% interval from 5 windows covers about 70%
 * (measured on M4 Hourly: 67% to 74%). We read the sorted values at position tau (N + 1) - 1,
 * the unbiased one (split conformal prediction's finite-sample rule, interpolated), clamped to
 * the extremes. `linear` keeps the reference's rule, for comparing with it.
 *
 * As the reference does, a short history uses as many windows as fit (each keeps at least one
 * observation to train on) and at least 2 are required. More windows calibrate better, at one
 * fit each.
 */
import { sortedQuantile, type QuantilePositions } from './empirical-quantile.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask } from './types.ts';

/**
 * The model's mean forecast with conformal quantiles at the task's levels. `forecast` is the
 * model's own; it is called once per window and once on the whole history.
 */
export function conformalForecast(
  forecast: (task: ForecastTask) => ForecastOutput,
  task: ForecastTask,
  requestedWindows: number,
  positions: QuantilePositions = 'unbiased',
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
  positions: QuantilePositions = 'unbiased',
): Float64Array[] {
  const offsets = scores.map((s) => {
    const both = new Float64Array(2 * s.length);
    s.forEach((score, w) => {
      both[w] = -score;
      both[s.length + w] = score;
    });
    return both.sort();
  });
  return levels.map((level) => mean.map((m, j) => m + sortedQuantile(offsets[j], level, positions)));
}
