import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';
import { DEFAULT_WINDOW_SIZE, type SeasonalWindowAverageOptions } from './naive-config.ts';
import { cyclicForecast } from './naive.ts';

/**
 * `seasonal-window-average`, as statsforecast's SeasonalWindowAverage: each step is the mean of
 * the values at the same place in the last `window_size` cycles of the season (as many as the
 * history holds, at least one). Given several seasonal periods (hourly data: the day and the
 * week), it takes the longest one the history holds: on hourly data, the same hour of the same
 * weekday over the last weeks. Averaging cycles keeps a pattern and drops one cycle's noise,
 * which seasonal naive repeats.
 *
 * Quantiles: normal, with the spread of the same average's errors inside the history (each value
 * against the mean of up to `window_size` cycles before it, as many as there are), growing with
 * the whole cycles ahead as seasonal naive's do (naive.ts, cyclicForecast).
 */
export function seasonalWindowAverage(task: ForecastTask, windowSize: number): ForecastOutput {
  const y = task.history;
  const n = y.length;
  const periods = task.seasonLengths ?? [task.seasonLength];
  const held = periods.filter((p) => p <= n);
  if (held.length === 0) {
    throw new ModelInputError(`seasonal-window-average needs at least ${Math.min(...periods)} observations of history (one season); got ${n}`);
  }
  const lag = Math.max(...held);
  const cycles = Math.max(1, Math.min(windowSize, Math.floor(n / lag)));
  // The mean at `phase` of the cycles before `end`: up to `cycles`, as many as there are.
  const average = (end: number, phase: number) => {
    const k = Math.min(cycles, Math.floor((end + phase) / lag));
    let sum = 0;
    for (let c = 1; c <= k; c++) sum += y[end - c * lag + phase];
    return sum / k;
  };
  return cyclicForecast(task, lag, average);
}

export const seasonalWindowAverageModel: LocalModel = {
  name: 'seasonal-window-average',
  forecast: (task) => seasonalWindowAverage(task, (task.options as SeasonalWindowAverageOptions | undefined)?.windowSize ?? DEFAULT_WINDOW_SIZE),
};
