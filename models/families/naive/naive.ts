import { gaussianQuantiles } from '../../numerics/normal.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * Seasonal random walk: each step repeats the value one season earlier (season 1 = naive).
 * Quantiles follow R's `forecast::snaive`: residual sd from the in-sample lag-m differences,
 * growing with the number of whole seasons ahead, sd_h = sigma * sqrt(floor((h - 1) / m) + 1).
 */
export function seasonalNaive(task: ForecastTask, lag: number): ForecastOutput {
  const y = task.history;
  const n = y.length;
  if (n < lag) {
    throw new ModelInputError(`naive with season_length ${lag} needs at least ${lag} observations of history; got ${n}`);
  }
  let sumSq = 0;
  let count = 0;
  for (let t = lag; t < n; t++) {
    const e = y[t] - y[t - lag];
    sumSq += e * e;
    count++;
  }
  // With no residual to learn from, the spread is unknown; the interval collapses to the point.
  const sigma = count > 0 ? Math.sqrt(sumSq / count) : 0;
  const mean = new Float64Array(task.horizon);
  const sd = new Float64Array(task.horizon);
  for (let h = 0; h < task.horizon; h++) {
    mean[h] = y[n - lag + (h % lag)];
    sd[h] = sigma * Math.sqrt(Math.floor(h / lag) + 1);
  }
  return { mean, quantiles: gaussianQuantiles(mean, sd, task.quantiles) };
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
