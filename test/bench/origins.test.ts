import { describe, expect, it } from 'vitest';
import { backtestSeries } from './accuracy/origins.ts';
import { joined, loadShortSet, shortSetTimes, type ShortSeries } from './accuracy/short-sets.ts';

describe("the ensemble benchmark's backtest over creation dates (--origins)", () => {
  it('cuts each series one horizon apart, the last cut being the set split, on the series own calendar', () => {
    const series: ShortSeries = {
      id: 'a',
      seasonLength: 1,
      horizon: 6,
      train: Float64Array.from({ length: 24 }, (_, i) => i),
      test: Float64Array.from([24, 25, 26, 27, 28, 29]),
    };
    const tasks = backtestSeries('yearly-panels', [series], 3);
    expect(tasks.map((t) => [t.id, t.origin, t.train.length])).toEqual([
      ['a@0', 0, 12],
      ['a@1', 1, 18],
      ['a@2', 2, 24],
    ]);
    const timeline = shortSetTimes('yearly-panels', 24, 30, 0);
    for (const task of tasks) {
      // Each test is the horizon right after the cut; the times follow the whole series' calendar.
      expect(Array.from(task.test)).toEqual(Array.from(joined(series).slice(task.train.length, task.train.length + 6)));
      expect(Array.from(task.times)).toEqual(Array.from(timeline.slice(0, task.train.length + 6)));
    }
    expect(tasks[2].train).toEqual(series.train);
    expect(tasks[2].test).toEqual(series.test);
    // A cut shorter than the set keeps (12 years) is left out.
    expect(backtestSeries('yearly-panels', [series], 4).map((t) => t.id)).toEqual(['a@1', 'a@2', 'a@3']);
  });

  it('keeps the real calendars of the published panels', async () => {
    const [first] = await loadShortSet('quarterly-panels');
    const tasks = backtestSeries('quarterly-panels', [first], 2);
    const own = shortSetTimes('quarterly-panels', first.train.length, first.train.length + first.horizon, 0, first.start);
    expect(tasks[1].times).toEqual(own);
    // The earlier creation date lies one horizon (8 quarters) before it, on the same calendar.
    expect(tasks[0].times[tasks[0].train.length - 1]).toBe(own[first.train.length - 1 - first.horizon]);
  });
});
