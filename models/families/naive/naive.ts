import { gaussianQuantiles } from '../../numerics/normal.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * A forecast that repeats a rule over the season's cycles: step h is `rule(n, h % lag)`, the rule
 * at the history's end. Its errors inside the history (each value from the second cycle on against
 * the rule where it stood, `rule(t, 0)`) give a normal spread that grows with the whole cycles
 * ahead, sd_h = sigma * sqrt(floor((h - 1) / m) + 1), as R's `forecast::snaive`.
 */
export function cyclicForecast(task: ForecastTask, lag: number, rule: (end: number, phase: number) => number): ForecastOutput {
  const y = task.history;
  const n = y.length;
  let sumSq = 0;
  let count = 0;
  for (let t = lag; t < n; t++) {
    const e = y[t] - rule(t, 0);
    sumSq += e * e;
    count++;
  }
  // With no residual to learn from, the spread is unknown; the interval collapses to the point.
  const sigma = count > 0 ? Math.sqrt(sumSq / count) : 0;
  const mean = new Float64Array(task.horizon);
  const sd = new Float64Array(task.horizon);
  for (let h = 0; h < task.horizon; h++) {
    mean[h] = rule(n, h % lag);
    sd[h] = sigma * Math.sqrt(Math.floor(h / lag) + 1);
  }
  return { mean, quantiles: gaussianQuantiles(mean, sd, task.quantiles) };
}

/** Seasonal random walk: each step repeats the value one season earlier (season 1 = naive); quantiles as R's `snaive`. */
export function seasonalNaive(task: ForecastTask, lag: number): ForecastOutput {
  const y = task.history;
  if (y.length < lag) {
    throw new ModelInputError(`naive with season_length ${lag} needs at least ${lag} observations of history; got ${y.length}`);
  }
  return cyclicForecast(task, lag, (end, phase) => y[end - lag + phase]);
}

/** `naive`: season_length from model_config, default 1 (the API reference's default). */
export const naive: LocalModel = {
  name: 'naive',
  forecast: (task) => seasonalNaive(task, task.seasonLength),
};

/** `seasonal-naive`: same model, its season_length defaults to the frequency's period. */
export const seasonalNaiveModel: LocalModel = {
  name: 'seasonal-naive',
  forecast: (task) => seasonalNaive(task, task.seasonLength),
};
