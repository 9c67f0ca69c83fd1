import { expect, test } from 'vitest';
import { planTasks, type SeriesTimeline, type TimelinePlan } from '../../engine/series-timeline.ts';

/** The one planner of both front doors, on timelines built by hand. */

const values = Float64Array.from({ length: 10 }, (_, t) => t + 1);
const plan = (extra: Partial<TimelinePlan> = {}): TimelinePlan => ({
  horizon: 2,
  quantiles: [0.5],
  context: null,
  maxContext: null,
  settings: { season: 3 },
  refit: 'every',
  ...extra,
});

test('each point sees the history before it (cut to the context), and the tasks come timeline by timeline', () => {
  const timelines: SeriesTimeline[] = [
    { seriesIndex: 4, values, points: [6, 8] },
    { seriesIndex: 7, values, points: [5] },
  ];
  const planned = planTasks(timelines, plan({ context: 3 }));
  expect(planned.map((p) => [p.timeline, p.position, p.point, p.task.seriesIndex])).toEqual([
    [0, 0, 6, 4],
    [0, 1, 8, 4],
    [1, 0, 5, 7],
  ]);
  expect([...planned[1].task.history]).toEqual([6, 7, 8]);
  expect(planned[1].task.seasonLength).toBe(3);
  expect(planned.every((p) => p.refitted && p.task.refit === undefined)).toBe(true);
});

test('under a refit policy a point keeps the fit of its anchor, counted over every point of the series', () => {
  // A job chunk holding only the last two of four dates: every 2nd from the first refits.
  const planned = planTasks([{ seriesIndex: 0, values, points: [7, 8], refitPoints: [5, 6, 7, 8] }], plan({ refit: 2 }));
  expect(planned.map((p) => [p.point, p.refitted, p.task.refit?.fcd, p.task.refit?.since])).toEqual([
    [7, true, 7, 0],
    [8, false, 7, 1],
  ]);
  expect([...planned[1].task.refit!.history]).toEqual([1, 2, 3, 4, 5, 6, 7]);
});

test('times run through the horizon, and covariates are cut to each point', () => {
  const times = Float64Array.from({ length: 12 }, (_, k) => k * 1000);
  const seen: [number, number][] = [];
  const [task] = planTasks(
    [{ seriesIndex: 0, values, points: [4], times, covariates: (from, to) => (seen.push([from, to]), { hist: {}, future: {}, static: {} }) }],
    plan({ context: 2, freq: 'H', settings: { season: 1, options: { estimation: 'r' }, conformal: { windows: 2 } } }),
  ).map((p) => p.task);
  expect([...task.times!]).toEqual([2000, 3000, 4000, 5000]);
  expect(seen).toEqual([[2, 4]]);
  expect([task.freq, task.options, task.conformal]).toEqual(['H', { estimation: 'r' }, { windows: 2 }]);
});
