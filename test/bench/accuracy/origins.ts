/**
 * A backtest over several creation dates of a short set: each series forecast from its last
 * `origins` cuts, one horizon apart, the latest being the set's own split. Every task of every
 * date goes in one request, as `POST /forecast` with `fcds` sends them: pooled quantiles and
 * weights then read only the windows each creation date knew
 * (docs/decisions/090-pools-read-only-known-windows.md). A cut whose history would be shorter than
 * the set keeps (MIN_TRAIN) is left out.
 */
import { joined, MIN_TRAIN, shortSetTimes, type ShortSeries, type ShortSet } from './short-sets.ts';

/** One task of the backtest: a series cut at one creation date, with the horizon after the cut as its test. */
export interface OriginSeries extends ShortSeries {
  /** The creation date's place, 0 for the earliest. */
  readonly origin: number;
  /** The task's index on the calendar of the whole series it was cut from. */
  readonly times: Float64Array;
}

/** Every series of `series` at each of its last `origins` cuts, creation dates oldest first within a series. */
export function backtestSeries(name: ShortSet, series: readonly ShortSeries[], origins: number): OriginSeries[] {
  const tasks: OriginSeries[] = [];
  series.forEach((s, i) => {
    const values = joined(s);
    const timeline = shortSetTimes(name, s.train.length, values.length, i, s.start);
    for (let origin = 0; origin < origins; origin++) {
      const cut = s.train.length - (origins - 1 - origin) * s.horizon;
      if (cut < MIN_TRAIN[name]) continue;
      tasks.push({
        ...s,
        id: `${s.id}@${origin}`,
        train: values.slice(0, cut),
        test: values.slice(cut, cut + s.horizon),
        origin,
        times: timeline.slice(0, cut + s.horizon),
      });
    }
  });
  return tasks;
}
