import { conformalQuantiles } from '../../numerics/conformal.ts';
import { countAtMost } from '../../numerics/sorted-search.ts';
import { creationTime, type ForecastTask } from '../../contract/model-interface.ts';

/**
 * Quantiles calibrated across series (`intervals: "pooled"`). Windows inside one short history
 * hold too few errors to calibrate on, and the early ones train on a fraction of it. A request
 * with many series of one frequency holds many more: each series' last window (trained on all but
 * its last horizon) gives one error per step. Divided by that window's naive scale, the errors of
 * different series compare; pooled per step over the request's series that share season and
 * horizon, they give the half-width at each level, times the series' own scale. Both scales read
 * the same recent stretch (recentScale): a whole history's naive errors follow its older, often
 * smaller level, and would size the window's errors and the forecast's interval on different pasts.
 *
 * The pool stands for the errors to come only when its series' windows are different periods.
 * Where most of them share their window's dates, one period's shock would set every interval, so
 * such a pool, like a small one, leaves the members' own quantiles. Why, and the measurements:
 * docs/decisions/058-pooled-calibration-of-short-series.md.
 *
 * A task reads only the windows known at its creation time: those whose last actual value is no
 * later than its own last one (knownToEach). In a backtest an early creation date would otherwise
 * learn from errors made after it (docs/decisions/090-pools-read-only-known-windows.md).
 */

/** Fewer series than this in a pool: the members' own quantiles (one series alone keeps its answer). */
export const MIN_POOLED_SERIES = 30;

/**
 * The most series of a pool whose last windows are run. Each costs about a whole fit. A bound
 * read from n errors covers a share that itself varies by about sqrt(0.8 x 0.2 / n): this many
 * keep that spread inside the coverage target's band (BENCHMARKS.md), and a larger request pays
 * for no more of them.
 */
export const MAX_CALIBRATION_SERIES = 400;

/** A pool whose series share one window start beyond this share is one period, not many: members' quantiles. */
export const MAX_SHARED_WINDOW_SHARE = 0.5;

/**
 * MASE's scale: the mean absolute seasonal naive error inside the history (lag 1 where the
 * history holds no full season and one observation more), over its last `span` differences
 * (all of them by default). Zero for a constant history or stretch.
 */
export function naiveScale(history: ArrayLike<number>, seasonLength: number, span = Infinity): number {
  const lag = history.length > seasonLength && seasonLength > 1 ? seasonLength : 1;
  let sum = 0;
  let count = 0;
  for (let t = Math.max(lag, history.length - span); t < history.length; t++) {
    const d = Math.abs(history[t] - history[t - lag]);
    if (Number.isFinite(d)) {
      sum += d;
      count++;
    }
  }
  return count > 0 ? sum / count : 0;
}

/**
 * The scale a pool reads: the naive errors of the last two horizons, and of at least four seasons
 * (a season's differences average over several cycles). Where that stretch stood still (an
 * intermittent series' zeros), the whole history's, so that an interval keeps a width; and where
 * the whole history's seasonal differences do too (a little over one season, its few differences
 * between zeros), its differences from step to step. Why this stretch, and the others measured:
 * docs/decisions/080-pooled-quantiles-on-a-recent-scale.md.
 */
export function recentScale(history: ArrayLike<number>, seasonLength: number, horizon: number): number {
  return naiveScale(history, seasonLength, Math.max(2 * horizon, 4 * seasonLength)) || naiveScale(history, seasonLength) || naiveScale(history, 1);
}

/** The pool a task belongs to: series of the same season and horizon. */
const poolKey = (task: ForecastTask) => `${task.seasonLength}|${task.horizon}`;

/** One series' contribution: its last window's combined forecast, where that window was cut. */
export interface LastWindow {
  readonly cut: number;
  readonly mean: Float64Array;
}

/**
 * Tasks of one pool that have a last window: their positions, each window's start time, when it
 * became known (its last actual value's time: the task's creation time), and what each brings.
 */
export interface Pool<T> {
  readonly indices: number[];
  readonly starts: number[];
  readonly knownAt: number[];
  readonly items: T[];
}

/**
 * The tasks' pools, from each task's last window (`window(i)`: where it is cut, and what the task
 * brings to its pool; null where it brings nothing).
 */
export function poolsOf<T>(tasks: readonly ForecastTask[], window: (i: number) => { cut: number; item: T } | null): Map<string, Pool<T>> {
  const pools = new Map<string, Pool<T>>();
  tasks.forEach((task, i) => {
    const found = window(i);
    if (found === null) return;
    const key = poolKey(task);
    const pool = pools.get(key) ?? pools.set(key, { indices: [], starts: [], knownAt: [], items: [] }).get(key)!;
    pool.indices.push(i);
    pool.starts.push(task.times?.[found.cut] ?? NaN);
    pool.knownAt.push(creationTime(task));
    pool.items.push(found.item);
  });
  return pools;
}

/**
 * Whether windows starting at `starts` may weigh the members: enough of them. One period's do too:
 * every member meets that period's shock, so their errors still rank them
 * (docs/decisions/094-one-periods-pools-weigh-the-members.md).
 */
const weighs = (starts: readonly number[]) => starts.length >= MIN_POOLED_SERIES;

/** Whether windows starting at `starts` may calibrate quantiles: enough of them, of different periods. */
const calibrates = (starts: readonly number[]) => weighs(starts) && !onePeriod(starts);

/** Unknown times sort first and count as known to every task: a request without an index has no order in time. */
const knownKey = (time: number) => (Number.isNaN(time) ? -Infinity : time);

/**
 * What each task's pool gives it: `derive` over the pool's items known at the task's creation
 * time, told whether they may calibrate quantiles too (not one period's); null where they are too
 * few to weigh or the task has no pool. Tasks that know the same items share one derivation.
 */
export function knownToEach<T, R>(
  tasks: readonly ForecastTask[],
  pools: Map<string, Pool<T>>,
  derive: (items: T[], calibrates: boolean) => R,
): (i: number) => R | null {
  const known = new Map<string, { order: number[]; times: number[]; derived: Map<number, R | null> }>();
  for (const [key, pool] of pools) {
    const order = pool.items.map((_, k) => k).sort((a, b) => knownKey(pool.knownAt[a]) - knownKey(pool.knownAt[b]));
    known.set(key, { order, times: order.map((k) => knownKey(pool.knownAt[k])), derived: new Map() });
  }
  return (i) => {
    const key = poolKey(tasks[i]);
    const pool = pools.get(key);
    const sorted = known.get(key);
    if (pool === undefined || sorted === undefined) return null;
    const time = creationTime(tasks[i]);
    const count = Number.isNaN(time) ? sorted.order.length : countAtMost(sorted.times, time);
    if (!sorted.derived.has(count)) {
      const chosen = sorted.order.slice(0, count);
      const starts = chosen.map((k) => pool.starts[k]);
      sorted.derived.set(
        count,
        weighs(starts)
          ? derive(
              chosen.map((k) => pool.items[k]),
              calibrates(starts),
            )
          : null,
      );
    }
    return sorted.derived.get(count)!;
  };
}

/** A pool's calibration: each step's offsets from the mean, per unit of the series' scale, at the levels asked. */
export interface PoolCalibration {
  offsets(levels: readonly number[]): Float64Array[];
}

/** A task's last window, combined, that calibrates its pool, and the recent scale of the history before it (recentScale, positive). */
export interface CalibratingWindow {
  readonly task: ForecastTask;
  readonly window: LastWindow;
  readonly scale: number;
}

/**
 * A pool's calibration from its last windows: each window's errors per step, over its scale, give
 * the offsets at each level (conformal rank rule). Null without a window.
 */
export function poolCalibration(windows: readonly CalibratingWindow[]): PoolCalibration | null {
  if (windows.length === 0) return null;
  const errors = windows.map(({ task, window, scale }) => Array.from(window.mean, (m, j) => Math.abs(task.history[window.cut + j] - m) / scale));
  const scores = Array.from({ length: errors[0].length }, (_, j) => Float64Array.from(errors, (e) => e[j]).sort());
  // The series of a request share their quantile levels: the offsets are worked out once.
  const byLevels = new Map<string, Float64Array[]>();
  const offsets = (levels: readonly number[]) => {
    const id = levels.join(',');
    return byLevels.get(id) ?? byLevels.set(id, conformalQuantiles(new Float64Array(scores.length), scores, levels)).get(id)!;
  };
  return { offsets };
}

/**
 * Which tasks run their last window, before any is run: those whose pool could calibrate
 * (calibrates, over the tasks with a last window, `lastCut(i)`, null where none), or only weigh
 * the members where `weighsMembers` (weighs: one period's pools too), at most
 * MAX_CALIBRATION_SERIES of each pool, evenly spread over it. The pool's other tasks get its
 * quantiles without paying for a window. The ensemble decides again for each task, from the
 * windows known at its creation time (knownToEach; a member may refuse, a scale be 0).
 */
export function mayPool(tasks: readonly ForecastTask[], lastCut: (i: number) => number | null, weighsMembers = false): boolean[] {
  const pools = poolsOf(tasks, (i) => {
    const cut = lastCut(i);
    return cut === null ? null : { cut, item: null };
  });
  const chosen = tasks.map(() => false);
  for (const pool of pools.values()) {
    if (!(weighsMembers ? weighs(pool.starts) : calibrates(pool.starts))) continue;
    const { indices } = pool;
    const take = Math.min(indices.length, MAX_CALIBRATION_SERIES);
    for (let k = 0; k < take; k++) chosen[indices[Math.floor((k * indices.length) / take)]] = true;
  }
  return chosen;
}

/** Whether more than MAX_SHARED_WINDOW_SHARE of the windows start at one time (unknown times count as distinct). */
function onePeriod(starts: readonly number[]): boolean {
  const counts = new Map<number, number>();
  let most = 0;
  for (const start of starts) {
    if (Number.isNaN(start)) continue;
    const count = (counts.get(start) ?? 0) + 1;
    counts.set(start, count);
    most = Math.max(most, count);
  }
  return most > MAX_SHARED_WINDOW_SHARE * starts.length;
}

/** A task's quantiles around its mean: its pool's offsets at each step, times the series' own recent scale. */
export function pooledQuantiles(task: ForecastTask, mean: Float64Array, pool: PoolCalibration): Float64Array[] {
  const scale = recentScale(task.history, task.seasonLength, task.horizon);
  return pool.offsets(task.quantiles).map((row) => mean.map((m, j) => m + row[j] * scale));
}
