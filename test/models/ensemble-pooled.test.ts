import { describe, expect, test } from 'vitest';
import { createEnsemble, runMembers, windowsToRun } from '../../models/families/ensemble/ensemble.ts';
import { LONG_LOW_FREQUENCY_PROFILE, SHORT_SERIES_PROFILE } from '../../models/families/ensemble/profiles.ts';
import { MAX_CALIBRATION_SERIES, MIN_POOLED_SERIES, naiveScale, recentScale } from '../../models/families/ensemble/pooled-calibration.ts';
import { pooledMemberErrors, scaledMemberErrors } from '../../models/families/ensemble/pooled-weights.ts';
import { ensembleConfig } from '../../models/families/ensemble/ensemble-config.ts';
import { loadMember } from '../../models/contract/model-registry.ts';
import type { EnsembleSettings, ForecastTask } from '../../models/contract/model-interface.ts';

const settings = { modelsDir: '/nonexistent', onnxThreads: 1 };
const ensemble = createEnsemble((name) => loadMember(name, settings));
const YEAR_MS = 365 * 86_400_000;
const HORIZON = 4;
const N = 24;

/** Series i: a straight line of slope 1 + i / 10, yearly, its history ending `endShift` years before 2020. */
function line(i: number, endShift: number): ForecastTask {
  const slope = 1 + i / 10;
  return {
    history: Float64Array.from({ length: N }, (_, t) => 5 + slope * t),
    horizon: HORIZON,
    quantiles: [0.1, 0.5, 0.9],
    seasonLength: 1,
    seriesIndex: i,
    times: Float64Array.from({ length: N + HORIZON }, (_, k) => Date.UTC(2020, 0, 1) - (N - 1 - k + endShift) * YEAR_MS),
  };
}
const options = (intervals: EnsembleSettings['intervals']) => ({
  options: { members: ['naive', 'seasonal-naive'], combination: 'mean' as const, windows: 5, intervals },
});

/**
 * Forty series ending 0 to 11 years before 2020 (line(i, i % 12)). A series reads the last windows
 * known at its own end: those of series that end no later. Those ending 0, 1 or 2 years before
 * know 40, 36 and 32 windows and pool; the others know fewer than MIN_POOLED_SERIES.
 */
const SPREAD_SERIES = MIN_POOLED_SERIES + 10;
const knowsAPool = (i: number) => i % 12 <= 2;

describe("ensemble's pooled quantiles", () => {
  test('the naive scale: mean absolute (seasonal) difference; lag 1 without a full season and one more; 0 for a constant history', () => {
    expect(naiveScale([1, 3, 6, 10], 1)).toBe(3);
    expect(naiveScale([1, 2, 4, 5, 7], 2)).toBe(3);
    expect(naiveScale([1, 3, 6], 4)).toBe(2.5);
    expect(naiveScale([7, 7, 7], 1)).toBe(0);
  });

  test('the recent scale: the last two horizons or four seasons of differences; the whole history where they stood still', () => {
    expect(naiveScale([1, 3, 6, 10], 1, 2)).toBe(3.5);
    const growing = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18];
    expect(recentScale(growing, 1, 2)).toBe(2);
    expect(recentScale(growing, 1, 5)).toBe(1.5);
    // Season 2: at least 8 differences at lag 2, though two horizons hold 2.
    expect(recentScale(growing, 2, 1)).toBe(3.125);
    expect(recentScale([1, 5, 2, 8, 0, 0, 0, 0, 0], 1, 2)).toBe(2.625);
    // Thirteen months, season 12: one seasonal difference, 0; the steps' differences keep a width.
    const intermittent = [0, 0, 0, 0, 1, 5, 0, 0, 0, 0, 0, 0, 0];
    expect(naiveScale(intermittent, 12)).toBe(0);
    expect(recentScale(intermittent, 12, 18)).toBe(10 / 12);
    expect(recentScale(Array(13).fill(3), 12, 18)).toBe(0);
  });

  test('the short profile pools, and runs only the earliest and the last window', () => {
    expect(SHORT_SERIES_PROFILE.intervals).toBe('pooled');
    expect(windowsToRun({ combination: 'mean', intervals: 'pooled' })).toBe('earliest-and-last');
    expect(windowsToRun({ combination: 'mean', intervals: 'members' })).toBe('earliest');
    expect(windowsToRun({ combination: 'weighted', intervals: 'pooled' })).toBe('all');
    expect(windowsToRun({ combination: 'median', intervals: 'conformal' })).toBe('all');
  });

  test("many series of different periods: each step's scaled last-window errors, pooled, times the series' own scale", async () => {
    // Naive forecasts of a line lag it by slope x (step + 1); the naive scale is the slope, so every
    // series' scaled error at step j is j + 1, and the 80% interval is the mean +- slope x (j + 1).
    const tasks = Array.from({ length: SPREAD_SERIES }, (_, i) => line(i, i % 12));
    const outputs = await ensemble.forecastBatch(tasks, [], options('pooled'));
    const members = await ensemble.forecastBatch(tasks, [], options('members'));
    tasks.forEach((task, i) => {
      if (!knowsAPool(i)) return expect(outputs[i]).toEqual(members[i]);
      const slope = 1 + i / 10;
      const last = task.history[N - 1];
      const [low, middle, high] = outputs[i].quantiles;
      expect([...outputs[i].mean]).toEqual([last, last, last, last]);
      expect([...middle]).toEqual([last, last, last, last]);
      for (let j = 0; j < HORIZON; j++) {
        expect(low[j]).toBeCloseTo(last - slope * (j + 1), 9);
        expect(high[j]).toBeCloseTo(last + slope * (j + 1), 9);
      }
    });
  });

  test('longer series with a season of at most 12 pool too: weighted members, every window run', async () => {
    // LONG_LOW_FREQUENCY_PROFILE's combination and quantiles. Both members forecast a line alike,
    // so the weights are equal and the pooled quantiles are those of the equal mean.
    expect(windowsToRun(LONG_LOW_FREQUENCY_PROFILE)).toBe('all');
    const tasks = Array.from({ length: SPREAD_SERIES }, (_, i) => line(i, i % 12));
    const weighted = await ensemble.forecastBatch(tasks, [], { options: { ...options('pooled').options, combination: 'weighted' } });
    expect(weighted).toEqual(await ensemble.forecastBatch(tasks, [], options('pooled')));
    expect(weighted[0].quantiles).not.toEqual((await ensemble.forecastBatch(tasks, [], options('conformal')))[0].quantiles);
  });

  test('a series whose level grew is sized by its recent differences, in the window and in the forecast', async () => {
    // Slope 1 + i / 10 until t = 10, three times that after: the last window (cut at 20) and the
    // forecast both read 8 differences of the steeper part, so the 80% interval is the mean +- 3
    // slope x (j + 1). A whole history's scale would mix the two slopes, differently in each.
    const kinked = (i: number): ForecastTask => {
      const task = line(i, i % 12);
      const slope = 1 + i / 10;
      return { ...task, history: task.history.map((_, t) => 5 + slope * (t <= 10 ? t : 10 + 3 * (t - 10))) };
    };
    const tasks = Array.from({ length: SPREAD_SERIES }, (_, i) => kinked(i));
    const outputs = await ensemble.forecastBatch(tasks, [], options('pooled'));
    tasks.forEach((task, i) => {
      if (!knowsAPool(i)) return;
      const steep = 3 * (1 + i / 10);
      const last = task.history[N - 1];
      for (let j = 0; j < HORIZON; j++) {
        expect(outputs[i].quantiles[0][j]).toBeCloseTo(last - steep * (j + 1), 9);
        expect(outputs[i].quantiles[2][j]).toBeCloseTo(last + steep * (j + 1), 9);
      }
    });
  });

  test("too few series, one series alone, or series of one period keep the members' own quantiles", async () => {
    const members = async (tasks: ForecastTask[]) => ensemble.forecastBatch(tasks, [], options('members'));
    const pooled = async (tasks: ForecastTask[]) => ensemble.forecastBatch(tasks, [], options('pooled'));
    const few = Array.from({ length: MIN_POOLED_SERIES - 1 }, (_, i) => line(i, i % 12));
    expect(await pooled(few)).toEqual(await members(few));
    expect(await pooled([line(3, 0)])).toEqual(await members([line(3, 0)]));
    // Forty series, all but a third of them ending in the same year: one period's errors, not many.
    const onePeriod = Array.from({ length: MIN_POOLED_SERIES + 10 }, (_, i) => line(i, i % 3 === 0 ? i % 12 : 0));
    expect(await pooled(onePeriod)).toEqual(await members(onePeriod));
    // The same forty of different periods do pool: the answers differ.
    const spread = Array.from({ length: SPREAD_SERIES }, (_, i) => line(i, i % 12));
    expect((await pooled(spread))[0].quantiles).not.toEqual((await members(spread))[0].quantiles);
  });

  test('a series learns nothing from windows that end after it: in a backtest, no look-ahead', async () => {
    // The same forty series with noise, so that each window's errors differ. Each answer must stay
    // the same when every series that ends later leaves the request.
    const noisy = (i: number) => {
      const task = line(i, i % 12);
      return { ...task, history: task.history.map((v, t) => v + (((t * 7919 + i * 104729) % 13) - 6) / 3) };
    };
    const tasks = Array.from({ length: SPREAD_SERIES }, (_, i) => noisy(i));
    for (const config of [options('pooled'), weighOptions('pooled', 'pooled')]) {
      const all = await ensemble.forecastBatch(tasks, [], config);
      for (const shift of [0, 1, 2]) {
        const known = tasks.filter((_, i) => i % 12 >= shift);
        const alone = await ensemble.forecastBatch(known, [], config);
        known.forEach((task, k) => expect(alone[k]).toEqual(all[task.seriesIndex!]));
      }
      // Those that know a pool do use it.
      expect(all[0].quantiles).not.toEqual((await ensemble.forecastBatch([tasks[0]], [], config))[0].quantiles);
    }
  });

  test('the last window, about a whole fit, runs only where a pool can use it', async () => {
    const members = [{ name: 'naive', model: await loadMember('naive', settings) }];
    const ranPerTask = async (tasks: ForecastTask[]) =>
      (await runMembers(members, tasks, [], 5, { combination: 'mean', intervals: 'pooled' })).runs[0].windows.map((w) => w.length);
    const spread = Array.from({ length: MIN_POOLED_SERIES }, (_, i) => line(i, i % 12));
    expect(await ranPerTask(spread)).toEqual(spread.map(() => 2));
    expect(await ranPerTask(spread.slice(1))).toEqual(spread.slice(1).map(() => 1));
    const onePeriod = Array.from({ length: MIN_POOLED_SERIES }, (_, i) => line(i, 0));
    expect(await ranPerTask(onePeriod)).toEqual(onePeriod.map(() => 1));
    // Pooled weights read one period's last windows too.
    const weighing = await runMembers(members, onePeriod, [], 5, { combination: 'pooled', intervals: 'pooled' });
    expect(weighing.runs[0].windows.map((w) => w.length)).toEqual(onePeriod.map(() => 2));
    // A large pool runs MAX_CALIBRATION_SERIES last windows, spread over it; every series gets its quantiles.
    const large = Array.from({ length: MAX_CALIBRATION_SERIES + 50 }, (_, i) => line(i, i % 12));
    const ran = await ranPerTask(large);
    expect(ran.filter((n) => n === 2)).toHaveLength(MAX_CALIBRATION_SERIES);
    expect(ran[0]).toBe(2);
    expect(ran.slice(-10)).toContain(2);
    const outputs = await ensemble.forecastBatch(large, [], options('pooled'));
    const j = ran.indexOf(1);
    const slope = 1 + j / 10;
    expect(outputs[j].quantiles[2][0]).toBeCloseTo(large[j].history[N - 1] + slope, 9);
  });
});

const weighOptions = (combination: EnsembleSettings['combination'], intervals: EnsembleSettings['intervals'] = 'members') => ({
  options: { members: ['naive', 'seasonal-window-average'], combination, windows: 5, intervals },
});

// On a line of slope s, naive forecasts the last value (its error at step j is s (j + 1)) and a
// window average of the last 4 values forecasts 1.5 s below it (error s (j + 1) + 1.5 s). Both
// windows' recent naive scale is s, so their scaled errors average 2.5 and 4 over 4 steps.
const NAIVE_ERROR = 2.5;
const AVERAGE_ERROR = 4;
const AVERAGE_WEIGHT = 1 / AVERAGE_ERROR ** 2 / (1 / NAIVE_ERROR ** 2 + 1 / AVERAGE_ERROR ** 2);

describe("ensemble's weights pooled across series", () => {
  test('the short profile weighs its members by their pool, and runs only the earliest and the last window', () => {
    expect(SHORT_SERIES_PROFILE.combination).toBe('pooled');
    expect(windowsToRun({ combination: 'pooled', intervals: 'members' })).toBe('earliest-and-last');
    expect(windowsToRun({ combination: 'pooled', intervals: 'pooled' })).toBe('earliest-and-last');
    expect(windowsToRun({ combination: 'pooled', intervals: 'conformal' })).toBe('all');
  });

  test("each member's error over the pool's last windows, scaled by each window's recent naive scale", () => {
    const cut = N - HORIZON;
    const windows = (count: number, missing: number) =>
      Array.from({ length: count }, (_, i) => {
        const task = line(i, 0);
        const slope = task.history[1] - task.history[0];
        const last = task.history[cut - 1];
        // The second member gave no forecast of the first `missing` series: it is averaged over the others.
        const byMember = [new Float64Array(HORIZON).fill(last), i < missing ? null : new Float64Array(HORIZON).fill(last - 1.5 * slope)];
        return scaledMemberErrors(task, { cut, byMember }, recentScale(task.history.subarray(0, cut), task.seasonLength, HORIZON));
      });
    const [naive, average] = pooledMemberErrors(windows(MIN_POOLED_SERIES + 1, 1));
    expect(naive).toBeCloseTo(NAIVE_ERROR, 12);
    expect(average).toBeCloseTo(AVERAGE_ERROR, 12);
    // Under MIN_POOLED_SERIES forecasts: no error of its own.
    expect(pooledMemberErrors(windows(MIN_POOLED_SERIES + 1, 2))[1]).toBeNaN();
  });

  test('many series of different periods: the mean leans on the member that did better in their last windows', async () => {
    const tasks = Array.from({ length: SPREAD_SERIES }, (_, i) => line(i, i % 12));
    const pooled = await ensemble.forecastBatch(tasks, [], weighOptions('pooled'));
    const equal = await ensemble.forecastBatch(tasks, [], weighOptions('mean'));
    tasks.forEach((task, i) => {
      const slope = 1 + i / 10;
      const last = task.history[N - 1];
      for (let j = 0; j < HORIZON; j++) {
        expect(pooled[i].mean[j]).toBeCloseTo(last - 1.5 * slope * (knowsAPool(i) ? AVERAGE_WEIGHT : 0.5), 9);
        expect(equal[i].mean[j]).toBeCloseTo(last - 0.75 * slope, 9);
      }
    });
  });

  test('too few series or one series alone get equal weights, as `mean` does', async () => {
    const answer = async (tasks: ForecastTask[], combination: EnsembleSettings['combination']) => ensemble.forecastBatch(tasks, [], weighOptions(combination));
    const few = Array.from({ length: MIN_POOLED_SERIES - 1 }, (_, i) => line(i, i % 12));
    expect(await answer(few, 'pooled')).toEqual(await answer(few, 'mean'));
    expect(await answer([line(3, 0)], 'pooled')).toEqual(await answer([line(3, 0)], 'mean'));
  });

  test("series of one period weigh the members by their pool, and keep the members' own quantiles", async () => {
    // Forty series, all but a third of them ending in the same year: too much one period's errors
    // to size intervals, but every member met the same period, so their errors still rank them.
    const onePeriod = Array.from({ length: MIN_POOLED_SERIES + 10 }, (_, i) => line(i, i % 3 === 0 ? i % 12 : 0));
    const weighed = await ensemble.forecastBatch(onePeriod, [], weighOptions('pooled', 'pooled'));
    expect(weighed).toEqual(await ensemble.forecastBatch(onePeriod, [], weighOptions('pooled', 'members')));
    onePeriod.forEach((task, i) => {
      if (i % 3 === 0 && i % 12 !== 0) return; // ends earlier: knows fewer than MIN_POOLED_SERIES windows
      const slope = 1 + i / 10;
      for (let j = 0; j < HORIZON; j++) expect(weighed[i].mean[j]).toBeCloseTo(task.history[N - 1] - 1.5 * slope * AVERAGE_WEIGHT, 9);
    });
  });

  test('pooled quantiles are calibrated on last windows combined with the pooled weights', async () => {
    // The combined last window sits 1.5 s x AVERAGE_WEIGHT below the line's last value, so the
    // scaled error at step j is j + 1 + 1.5 x AVERAGE_WEIGHT: the 80% bound's offset from the mean.
    const tasks = Array.from({ length: SPREAD_SERIES }, (_, i) => line(i, i % 12));
    const outputs = await ensemble.forecastBatch(tasks, [], weighOptions('pooled', 'pooled'));
    tasks.forEach((_, i) => {
      if (!knowsAPool(i)) return;
      const slope = 1 + i / 10;
      for (let j = 0; j < HORIZON; j++) expect(outputs[i].quantiles[2][j] - outputs[i].mean[j]).toBeCloseTo(slope * (j + 1 + 1.5 * AVERAGE_WEIGHT), 9);
    });
  });

  test('`pooled` is a combination a request may name; an unknown one is refused with its path', () => {
    expect(ensembleConfig.schema.safeParse({ combination: 'pooled' }).success).toBe(true);
    const refused = ensembleConfig.schema.safeParse({ combination: 'pooled-ish' });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0].path).toEqual(['combination']);
  });
});
