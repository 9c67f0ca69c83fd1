import type { ForecastOutput } from './model-interface.ts';

/** Whether every value equals the first exactly: a history that shows no change to fit. */
export function isExactlyConstant(y: ArrayLike<number>): boolean {
  for (let i = 1; i < y.length; i++) if (y[i] !== y[0]) return false;
  return true;
}

/**
 * A constant history's forecast, as every model that meets one gives it: its value at every
 * step, and every quantile the same (its data show no spread).
 */
export function constantForecast(value: number, horizon: number, levels: number): ForecastOutput {
  const flat = () => new Float64Array(horizon).fill(value);
  return { mean: flat(), quantiles: Array.from({ length: levels }, flat) };
}
