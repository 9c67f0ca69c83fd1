import type { ForecastTask } from '../../contract/model-interface.ts';
import { calibrates, MIN_POOLED_SERIES, poolKey, poolsOf, recentScale } from './pooled-calibration.ts';

/**
 * Members weighed across series (`combination: "pooled"`). Windows inside one short history hold
 * a handful of errors, and weights learned there are noise more than signal. A request with many
 * series of one season and horizon holds many last windows that every member forecast. Each
 * member's error there, divided by the window's recent naive scale and averaged over the pool's
 * series, says how well it forecasts this kind of data. Its weight is the inverse of that error
 * squared, as the long profile weighs members per series. A pool that may not calibrate its
 * quantiles (too few series, or one period's) weighs nobody: its series get equal weights.
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
 * Each task's pool's member errors, or null where its pool may not calibrate (calibrates) or the
 * task has none. `lastForecasts(i)` is task i's last window, null where it was not run.
 */
export function pooledMemberErrors(tasks: readonly ForecastTask[], lastForecasts: (i: number) => LastForecasts | null): (i: number) => PooledErrors | null {
  const pools = poolsOf(tasks, (i) => {
    const last = lastForecasts(i);
    if (last === null) return null;
    const task = tasks[i];
    const scale = recentScale(task.history.subarray(0, last.cut), task.seasonLength, task.horizon);
    if (!(scale > 0)) return null;
    const actual = task.history.subarray(last.cut, last.cut + task.horizon);
    return { cut: last.cut, item: last.byMember.map((forecast) => (forecast === null ? NaN : meanAbsoluteError(forecast, actual) / scale)) };
  });
  const errors = new Map<string, PooledErrors>();
  for (const [key, pool] of pools) {
    if (!calibrates(pool)) continue;
    const members = pool.items[0].length;
    errors.set(
      key,
      Array.from({ length: members }, (_, k) => {
        const seen = pool.items.map((item) => item[k]).filter(Number.isFinite);
        return seen.length >= MIN_POOLED_SERIES ? seen.reduce((a, b) => a + b, 0) / seen.length : NaN;
      }),
    );
  }
  return (i) => errors.get(poolKey(tasks[i])) ?? null;
}

function meanAbsoluteError(forecast: Float64Array, actual: Float64Array): number {
  let sum = 0;
  for (let j = 0; j < actual.length; j++) sum += Math.abs(forecast[j] - actual[j]);
  return sum / actual.length;
}
