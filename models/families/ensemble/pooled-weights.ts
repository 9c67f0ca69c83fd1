import type { ForecastTask } from '../../contract/model-interface.ts';
import { MIN_POOLED_SERIES } from './pooled-calibration.ts';

/**
 * Members weighed across series (`combination: "pooled"`). Windows inside one short history hold
 * a handful of errors, and weights learned there are noise more than signal. A request with many
 * series of one season and horizon holds many last windows that every member forecast. Each
 * member's error there, divided by the window's recent naive scale and averaged over the pool's
 * series, says how well it forecasts this kind of data. Its weight is the inverse of that error
 * squared, as the long profile weighs members per series. A task reads only the windows known at
 * its creation time; where those may not calibrate its quantiles (too few series, or one
 * period's), the task gets equal weights (pooled-calibration.ts, knownToEach; ensemble.ts,
 * combineGroup).
 * Why, and the measurements: docs/decisions/089-ensemble-weights-pooled-across-series.md.
 */

/** One task's last window: where it was cut, and each member's forecast of it (null where the member gave none). */
export interface LastForecasts {
  readonly cut: number;
  readonly byMember: readonly (Float64Array | null)[];
}

/** Each member's mean scaled error over a pool; NaN for a member that forecast fewer than MIN_POOLED_SERIES of its windows. */
export type PooledErrors = readonly number[];

/**
 * Each member's mean absolute error in a task's last window, over `scale` (the recent naive scale
 * of the history before it, recentScale); NaN where the member gave no forecast. It does not
 * depend on which windows a task knows, so it is worked out once per window.
 */
export function scaledMemberErrors(task: ForecastTask, last: LastForecasts, scale: number): number[] {
  const actual = task.history.subarray(last.cut, last.cut + task.horizon);
  return last.byMember.map((forecast) => (forecast === null ? NaN : meanAbsoluteError(forecast, actual) / scale));
}

/** Each member's mean of its scaled errors over a pool's windows (scaledMemberErrors); NaN for a member with fewer than MIN_POOLED_SERIES of them. */
export function pooledMemberErrors(scaled: readonly (readonly number[])[]): PooledErrors {
  const members = scaled[0]?.length ?? 0;
  return Array.from({ length: members }, (_, k) => {
    const seen = scaled.map((errors) => errors[k]).filter(Number.isFinite);
    return seen.length >= MIN_POOLED_SERIES ? seen.reduce((a, b) => a + b, 0) / seen.length : NaN;
  });
}

function meanAbsoluteError(forecast: Float64Array, actual: Float64Array): number {
  let sum = 0;
  for (let j = 0; j < actual.length; j++) sum += Math.abs(forecast[j] - actual[j]);
  return sum / actual.length;
}
