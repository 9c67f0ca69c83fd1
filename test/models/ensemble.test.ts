import { describe, expect, test } from 'vitest';
import { combineTask, createEnsemble, runMembers } from '../../models/families/ensemble/ensemble.ts';
import {
  defaultProfile,
  LONG_LOW_FREQUENCY_PROFILE,
  LONG_SERIES_PROFILE,
  MULTI_SEASONAL_PROFILE,
  SHORT_SERIES_PROFILE,
} from '../../models/families/ensemble/profiles.ts';
import { combine, memberWeights, windowErrors } from '../../models/families/ensemble/combine.ts';
import { windowBatch, windowCuts, windowTask } from '../../models/families/ensemble/members.ts';
import { loadMember } from '../../models/contract/model-registry.ts';
import { loadRSeasonal } from '../../datasets/r-seasonal.ts';
import type { AarimaFit } from '../../models/families/arima/aarima.ts';
import { ModelInputError, type EnsembleSettings, type ForecastTask, type LocalModel } from '../../models/contract/model-interface.ts';

const settings = { modelsDir: '/nonexistent', onnxThreads: 1 };
/** Combinings that read every window (weights, conformal quantiles) and the earliest alone (an equal mean, the members' quantiles). */
const EVERY_WINDOW = { combination: 'weighted', intervals: 'conformal' } as const;
const EARLIEST_WINDOW = { combination: 'mean', intervals: 'members' } as const;
const ensemble = createEnsemble((name) => loadMember(name, settings));
const options = (
  members: string[],
  combination: EnsembleSettings['combination'] = 'weighted',
  windows = 5,
  intervals: EnsembleSettings['intervals'] = 'conformal',
) => ({
  options: { members, combination, windows, intervals },
});
const trend = (n: number) => Float64Array.from({ length: n }, (_, t) => t);
const task = (history: Float64Array, horizon: number, seasonLength: number, quantiles = [0.1, 0.9]): ForecastTask => ({
  history,
  horizon,
  quantiles,
  seasonLength,
});

describe('ensemble combination numerics', () => {
  test('weights inverse to the squared mean absolute error; an exact member takes all the weight; mean and median', () => {
    const actual = [Float64Array.of(1, 2), Float64Array.of(3, 4)];
    const errors = windowErrors(
      [
        [Float64Array.of(2, 3), Float64Array.of(4, 5)], // off by 1 everywhere
        [Float64Array.of(4, 5), Float64Array.of(0, 1)], // off by 3
      ],
      actual,
    );
    expect(errors).toEqual([1, 9]);
    // One spike: mean absolute error 1.5, squared 2.25, where the mean squared error would be 9.
    expect(windowErrors([[Float64Array.of(1, 2), Float64Array.of(3, 10)]], actual)).toEqual([2.25]);
    const [a, b] = memberWeights('weighted', errors);
    expect(a).toBeCloseTo(0.9, 15);
    expect(b).toBeCloseTo(0.1, 15);
    expect(memberWeights('mean', errors)).toEqual([0.5, 0.5]);
    expect(memberWeights('weighted', [0, 2, 0])).toEqual([0.5, 0, 0.5]);
    const forecasts = [Float64Array.of(1, 10), Float64Array.of(2, 20), Float64Array.of(9, 30)];
    expect([...combine('median', forecasts, [])]).toEqual([2, 20]);
    expect([...combine('median', forecasts.slice(0, 2), [])]).toEqual([1.5, 15]);
    expect([...combine('weighted', forecasts.slice(0, 2), [0.75, 0.25])]).toEqual([1.25, 12.5]);
  });

  test('windows end horizon steps apart, the last at the end of the history, each keeping an observation to train on', () => {
    expect(windowCuts(100, 10, 5)).toEqual([50, 60, 70, 80, 90]);
    expect(windowCuts(25, 10, 5)).toEqual([5, 15]);
    expect(windowCuts(10, 10, 5)).toEqual([]);
    const t = windowTask(
      {
        ...task(trend(20), 3, 1),
        times: trend(23),
        covariates: { hist: { h: Array.from(trend(20)) }, future: { f: Array.from(trend(23)) }, static: { s: 1 } },
      },
      12,
    );
    expect([...t.history]).toEqual([...trend(12)]);
    expect(t.times).toHaveLength(15);
    expect(t.covariates!.hist.h).toHaveLength(12);
    expect(t.covariates!.future.f).toHaveLength(15);
    expect(t.quantiles).toEqual([]);
  });

  test("a global member's rolling windows are forecast by one model where the histories end together; the earliest and last alone each by their own", () => {
    const ending = (n: number, end: number): ForecastTask => ({
      ...task(trend(n), 8, 1),
      times: Float64Array.from({ length: n + 8 }, (_, i) => end - (n - 1 - i) * 3_600_000),
    });
    const together = [ending(100, 1e12), ending(30, 1e12)];
    expect(windowBatch(together, [windowCuts(100, 8, 5), windowCuts(30, 8, 5)])).toEqual({ options: { maxModels: 1 } });
    expect(windowBatch(together, [[52, 92], [5]])).toEqual({});
    expect(windowBatch(together.slice(0, 1), [[]])).toEqual({});
    // Histories that end apart: the member groups the cuts as it does alone.
    expect(windowBatch([ending(100, 1e12), ending(30, 1e12 - 86_400_000 * 365)], [windowCuts(100, 8, 5), windowCuts(30, 8, 5)])).toEqual({});
  });
});

describe('ensemble model', () => {
  test('weights come from window errors and quantiles from the combined windows (worked by hand on a trend)', async () => {
    // y = t, horizon 3, season 4. In every window naive errs by j + 1 (mean absolute error 2,
    // squared 4), seasonal naive by 4 (16): weights 4/5 and 1/5. The combination errs by
    // (4 j + 8) / 5 in every window, so with 5 windows its 10%/90% conformal quantiles sit exactly
    // that far from the mean.
    const n = 40;
    const [out] = await ensemble.forecastBatch([task(trend(n), 3, 4)], [], options(['naive', 'seasonal-naive']));
    for (let j = 0; j < 3; j++) {
      const mean = (4 / 5) * (n - 1) + (1 / 5) * (n - 4 + j);
      const spread = (4 * j + 8) / 5;
      expect(out.mean[j]).toBeCloseTo(mean, 12);
      expect(out.quantiles[0][j]).toBeCloseTo(mean - spread, 12);
      expect(out.quantiles[1][j]).toBeCloseTo(mean + spread, 12);
    }
    const [equal] = await ensemble.forecastBatch([task(trend(n), 3, 4)], [], options(['naive', 'seasonal-naive'], 'mean'));
    expect(equal.mean[0]).toBeCloseTo((n - 1 + n - 4) / 2, 12);
  });

  test("`members` quantiles: each member's offsets from its mean, weighted as the means, around the combined mean", async () => {
    // The trend of the first test: weights 4/5 (naive) and 1/5 (seasonal naive).
    const t = task(trend(40), 3, 4, [0.1, 0.5, 0.9]);
    const [out] = await ensemble.forecastBatch([t], [], options(['naive', 'seasonal-naive'], 'weighted', 5, 'members'));
    const [conformal] = await ensemble.forecastBatch([t], [], options(['naive', 'seasonal-naive'], 'weighted', 5, 'conformal'));
    expect(out.mean).toEqual(conformal.mean);
    const own = async (name: string) => ((await loadMember(name, settings)) as LocalModel).forecast(t);
    const [a, b] = [await own('naive'), await own('seasonal-naive')];
    for (let q = 0; q < 3; q++)
      for (let j = 0; j < 3; j++) {
        const offset = (4 / 5) * (a.quantiles[q][j] - a.mean[j]) + (1 / 5) * (b.quantiles[q][j] - b.mean[j]);
        expect(out.quantiles[q][j]).toBeCloseTo(out.mean[j] + offset, 12);
      }
    expect(out.quantiles[0][2]).toBeLessThan(out.quantiles[1][2]);
    expect(out.quantiles[1][2]).toBeLessThan(out.quantiles[2][2]);
    expect(out.quantiles[2]).not.toEqual(conformal.quantiles[2]);
  });

  test("the equal mean with the members' quantiles runs only the earliest window, which seats the same members as all of them", async () => {
    // Season 8: seasonal naive refuses a window whose history is shorter than a season, so it sits
    // out the 20-point series (earliest cut 5) and takes part in the 40-point one (earliest cut 25).
    const tasks = [
      task(trend(20), 3, 8, [0.1, 0.9]),
      task(
        trend(40).map((v) => v + (v % 8)),
        3,
        8,
        [0.1, 0.9],
      ),
    ];
    const members = await Promise.all(['naive', 'seasonal-naive'].map(async (name) => ({ name, model: await loadMember(name, settings) })));
    const combining = { combination: 'mean', intervals: 'members' } as const;
    const earliest = await runMembers(members, tasks, [], 5, EARLIEST_WINDOW);
    const all = await runMembers(members, tasks, [], 5, EVERY_WINDOW);
    expect(earliest.runs[1].windows.map((w) => w.length)).toEqual([1, 1]);
    expect(all.runs[1].windows.map((w) => w.length)).toEqual([5, 5]);
    expect(earliest.runs[1].windows[0][0]).toBeNull();
    expect(all.runs[1].windows[1].every((w) => w !== null)).toBe(true);
    const outputs = await ensemble.forecastBatch(tasks, [], options(['naive', 'seasonal-naive'], 'mean', 5, 'members'));
    tasks.forEach((t, i) => {
      expect(outputs[i]).toEqual(combineTask(t, i, all, combining, ['naive', 'seasonal-naive']));
      expect(combineTask(t, i, earliest, combining, ['naive', 'seasonal-naive'])).toEqual(outputs[i]);
    });
    expect(outputs[0].mean).toEqual(Float64Array.of(19, 19, 19));
    expect(() => combineTask(tasks[0], 0, earliest, { combination: 'weighted', intervals: 'members' }, ['naive', 'seasonal-naive'])).toThrow(/every window/);
  });

  test("where every window runs, a member that keeps fits is fitted at the earliest window and carries that fit; a pool's last window gets its own", async () => {
    const y = Float64Array.from({ length: 60 }, (_, t) => 10 + 0.3 * t + 3 * Math.sin(t / 2) + ((t * 7) % 5));
    const seriesTask = task(y, 4, 1);
    const theta = (await loadMember('theta', settings)) as LocalModel;
    const cuts = windowCuts(y.length, 4, 5);
    const all = await runMembers([{ name: 'theta', model: theta }], [seriesTask], [], 5, EVERY_WINDOW);
    const kept = theta.reuse!.fit(windowTask(seriesTask, cuts[0]));
    cuts.forEach((cut, w) => {
      const carried = theta.reuse!.forecast(kept, {
        ...windowTask(seriesTask, cut),
        refit: { fcd: cuts[0], history: y.subarray(0, cuts[0]), since: cut - cuts[0] },
      });
      expect(all.runs[0].windows[0][w]).toEqual(carried.mean);
    });
    // The carried fit is not a fresh one: the last window differs from a fit of its own.
    const fresh = theta.forecast(windowTask(seriesTask, cuts[4])).mean;
    expect(all.runs[0].windows[0][4]).not.toEqual(fresh);
    const pooled = await runMembers(
      [{ name: 'theta', model: theta }],
      Array.from({ length: 30 }, (_, i) => task(y.subarray(0, 40 + i), 4, 1)),
      [],
      5,
      { combination: 'mean', intervals: 'pooled' },
    );
    expect(pooled.runs[0].windows[20]).toEqual([theta.forecast(windowTask(seriesTask, 40)).mean, theta.forecast(windowTask(seriesTask, 56)).mean]);
  });

  test("aarima's windows keep its search's CSS fit; its whole history is refitted by maximum likelihood", async () => {
    const aarima = (await loadMember('aarima', settings)) as LocalModel;
    const y = loadRSeasonal().find((s) => s.id === 'USAccDeaths')!.y;
    const seriesTask = task(y, 12, 12, [0.1, 0.9]);
    const [cut] = windowCuts(y.length, 12, 2);
    const windowWith = (maxRefits: number) => aarima.forecast({ ...windowTask(seriesTask, cut), options: { approximation: 'on', maxRefits } }).mean;
    const { runs } = await runMembers([{ name: 'aarima', model: aarima }], [seriesTask], [], 2, EARLIEST_WINDOW);
    expect(runs[0].windows[0][0]).toEqual(windowWith(0));
    expect(windowWith(0)).not.toEqual(windowWith(1));
    expect(runs[0].full[0]).toEqual(aarima.forecast({ ...seriesTask, options: { approximation: 'on', maxRefits: 2 } }));
    // mdeaths: the search's best candidate is refused when refitted; the ensemble refits the next.
    const refused = task(loadRSeasonal().find((s) => s.id === 'mdeaths')!.y, 12, 12, [0.1, 0.9]);
    const second = await runMembers([{ name: 'aarima', model: aarima }], [refused], [], 2, EARLIEST_WINDOW);
    expect(second.runs[0].full[0]).toEqual(aarima.forecast({ ...refused, options: { approximation: 'on', maxRefits: 2 } }));
    expect(second.runs[0].full[0]).not.toEqual(aarima.forecast({ ...refused, options: { approximation: 'on', maxRefits: 1 } }));
    // Where every window runs, the fit carried through them is the CSS one too.
    const carried = await runMembers([{ name: 'aarima', model: aarima }], [seriesTask], [], 3, EVERY_WINDOW);
    const cuts = windowCuts(y.length, 12, 3);
    const kept = aarima.reuse!.fit({ ...windowTask(seriesTask, cuts[0]), options: { approximation: 'on', maxRefits: 0 } }) as AarimaFit;
    expect(kept.model.kind === 'arima' && kept.model.fit.method).toBe('CSS');
    expect(carried.runs[0].windows[0][2]).toEqual(
      aarima.reuse!.forecast(kept, { ...windowTask(seriesTask, cuts[2]), refit: { fcd: cuts[0], history: y.subarray(0, cuts[0]), since: cuts[2] - cuts[0] } })
        .mean,
    );
  });

  test('a member refusing the windows sits the series out; one refusing everything too; none left is a model input error', async () => {
    // Season 8 with 10 observations: seasonal naive forecasts the whole history but no window (cuts 1, 4, 7).
    const short = trend(10);
    const [out] = await ensemble.forecastBatch([task(short, 3, 8)], [], options(['naive', 'seasonal-naive']));
    expect([...out.mean]).toEqual([9, 9, 9]);
    // Naive errs by j + 1 in each of the 3 windows.
    expect(out.quantiles[1][2]).toBeCloseTo(12, 12);
    await expect(ensemble.forecastBatch([task(trend(3), 2, 4)], [], options(['seasonal-naive', 'theta']))).rejects.toThrow(ModelInputError);
    await expect(ensemble.forecastBatch([task(trend(3), 2, 4)], [], options(['seasonal-naive', 'theta']))).rejects.toThrow(/seasonal-naive: .*; theta: /);
  });

  test('a forecast that is not finite counts as refused: in a window the member sits the series out, in the whole history too', async () => {
    const naive = (await loadMember('naive', settings)) as LocalModel;
    // A member whose windows past the earliest come back NaN, as a kept fit gone wrong would.
    const flaky: LocalModel = {
      name: 'flaky',
      forecast: (t) => (t.history.length > 5 && t.history.length < 20 ? { mean: new Float64Array(t.horizon).fill(NaN), quantiles: [] } : naive.forecast(t)),
    };
    const members = [
      { name: 'naive', model: naive },
      { name: 'flaky', model: flaky },
    ];
    const runs = await runMembers(members, [task(trend(20), 3, 1)], [], 5, EVERY_WINDOW);
    expect(runs.runs[1].windows[0].map((w) => w === null)).toEqual([false, true, true, true, true]);
    const out = combineTask(task(trend(20), 3, 1), 0, runs, { combination: 'weighted', intervals: 'conformal' }, ['naive', 'flaky']);
    expect([...out.mean]).toEqual([...naive.forecast(task(trend(20), 3, 1)).mean]);
    const broken: LocalModel = { name: 'broken', forecast: (t) => ({ mean: new Float64Array(t.horizon).fill(NaN), quantiles: [] }) };
    const alone = await runMembers([{ name: 'broken', model: broken }], [task(trend(20), 3, 1)], [], 5, EVERY_WINDOW);
    expect(alone.runs[0].full).toEqual([null]);
    expect(alone.runs[0].refusal).toMatch(/not finite/);
  });

  test('a member whose forecast runs away from the history is left out, as a refusal is, unless every member runs away', async () => {
    // CES diverges on this short intermittent series (statsforecast's AutoCES to millions too).
    const t = task(Float64Array.from([...Array(12).fill(0), 1, 0, 0, 0]), 24, 12);
    const load = async (name: string) => (await loadMember(name, settings)) as LocalModel;
    const [aets, ces, theta] = await Promise.all(['aets', 'ces', 'theta'].map(load));
    expect(Math.max(...ces.forecast(t).mean)).toBeGreaterThan(1e5);
    const [out] = await ensemble.forecastBatch([t], [], options(['aets', 'ces', 'theta']));
    const [a, b] = [aets.forecast(t).mean, theta.forecast(t).mean];
    // The two others' mean (as members they run with the ensemble's own settings, a hair apart).
    out.mean.forEach((v, j) => expect(v).toBeCloseTo((a[j] + b[j]) / 2, 2));
    const [alone] = await ensemble.forecastBatch([t], [], options(['ces']));
    expect([...alone.mean]).toEqual([...ces.forecast(t).mean]);
  });

  test("a history too short for two windows gets the equal-weight mean and the mean of the members' quantiles", async () => {
    const history = Float64Array.of(3, 1, 4, 1, 5);
    const t = task(history, 3, 2);
    const [out] = await ensemble.forecastBatch([t], [], options(['naive', 'seasonal-naive']));
    const naive = (await loadMember('naive', settings)) as { forecast: (t: ForecastTask) => { mean: Float64Array; quantiles: Float64Array[] } };
    const snaive = (await loadMember('seasonal-naive', settings)) as typeof naive;
    const a = naive.forecast(t);
    const b = snaive.forecast(t);
    expect([...out.mean]).toEqual([...a.mean].map((v, j) => (v + b.mean[j]) / 2));
    expect([...out.quantiles[1]]).toEqual([...a.quantiles[1]].map((v, j) => (v + b.quantiles[1][j]) / 2));
  });

  test('naive stays the last value inside an ensemble whose season is 4', async () => {
    const runs = await runMembers([{ name: 'naive', model: await loadMember('naive', settings) }], [task(trend(20), 3, 4)], [], 2, EVERY_WINDOW);
    expect([...runs.runs[0].full[0]!.mean]).toEqual([19, 19, 19]);
    expect([...combineTask(task(trend(20), 3, 4), 0, runs, { combination: 'mean', intervals: 'conformal' }, ['naive']).mean]).toEqual([19, 19, 19]);
  });

  test("without members, combination or intervals each series gets its profile: short ones (n <= 150, season <= 12) six weighed and calibrated across the request's series, long ones the weighted five with conformal quantiles (four, less seasonal-naive, with pooled ones where the season is at most 12), long ones of several seasons the weighted four", () => {
    expect(defaultProfile(task(trend(150), 8, 12))).toBe(SHORT_SERIES_PROFILE);
    expect(defaultProfile(task(trend(151), 8, 12))).toBe(LONG_LOW_FREQUENCY_PROFILE);
    expect(defaultProfile(task(trend(151), 8, 13))).toBe(LONG_SERIES_PROFILE);
    expect(defaultProfile(task(trend(60), 8, 24))).toBe(LONG_SERIES_PROFILE);
    // Several seasons that fit twice in the history (hourly: the day and the week): the multi-seasonal profile.
    const hourlyTask = (n: number) => ({ ...task(trend(n), 8, 24), seasonLengths: [24, 168] });
    expect(defaultProfile(hourlyTask(337))).toBe(MULTI_SEASONAL_PROFILE);
    expect(defaultProfile(hourlyTask(336))).toBe(LONG_SERIES_PROFILE);
    expect(MULTI_SEASONAL_PROFILE).toEqual({
      members: ['mstl', 'svc-global', 'seasonal-naive', 'seasonal-window-average'],
      combination: 'weighted',
      intervals: 'conformal',
    });
    expect(SHORT_SERIES_PROFILE).toEqual({ members: ['aets', 'aarima', 'theta', 'ces', 'mstl', 'svc-global'], combination: 'pooled', intervals: 'pooled' });
    expect(LONG_SERIES_PROFILE).toEqual({
      members: ['aets', 'theta', 'mstl', 'svc-global', 'seasonal-naive'],
      combination: 'weighted',
      intervals: 'conformal',
    });
    expect(LONG_LOW_FREQUENCY_PROFILE).toEqual({ members: ['aets', 'theta', 'mstl', 'svc-global'], combination: 'weighted', intervals: 'pooled' });
  });

  test('a batch mixing short and long series: each group forecast as if requested alone with its profile named', async () => {
    // Quarterly-like series with a season and a trend; two short (48 points), one long (200).
    const wave = (n: number, phase: number) =>
      Float64Array.from({ length: n }, (_, t) => 50 + 0.4 * t + 6 * Math.sin((2 * Math.PI * (t + phase)) / 4) + ((t * 7919 + phase) % 7) / 3);
    const withTimes = (history: Float64Array, i: number): ForecastTask => ({
      ...task(history, 8, 4, [0.1, 0.5, 0.9]),
      seriesIndex: i,
      times: Float64Array.from({ length: history.length + 8 }, (_, k) => Date.UTC(2000, 0, 1) + (k - history.length) * 86_400_000 * 91),
    });
    const tasks = [withTimes(wave(48, 0), 0), withTimes(wave(200, 1), 1), withTimes(wave(48, 2), 2)];
    const mixed = await ensemble.forecastBatch(tasks, []);
    const alone = (p: typeof SHORT_SERIES_PROFILE, ts: ForecastTask[]) =>
      ensemble.forecastBatch(ts, [], { options: { members: p.members, combination: p.combination, intervals: p.intervals, windows: 5 } });
    const [short0, short2] = await alone(SHORT_SERIES_PROFILE, [tasks[0], tasks[2]]);
    const [long1] = await alone(LONG_LOW_FREQUENCY_PROFILE, [tasks[1]]);
    expect(mixed[0]).toEqual(short0);
    expect(mixed[2]).toEqual(short2);
    expect(mixed[1]).toEqual(long1);
    // The two profiles really differ on the same short series.
    const [asLong] = await alone(LONG_LOW_FREQUENCY_PROFILE, [tasks[0]]);
    expect(asLong.mean).not.toEqual(short0.mean);
    // Naming only the members keeps each series' own source of quantiles.
    const [short0Named, long1Named] = await ensemble.forecastBatch([tasks[0], tasks[1]], [], { options: { members: ['aets', 'theta'], windows: 5 } });
    const [short0Members] = await ensemble.forecastBatch([tasks[0]], [], options(['aets', 'theta'], 'mean', 5, 'members'));
    const [long1Pooled] = await ensemble.forecastBatch([tasks[1]], [], options(['aets', 'theta'], 'weighted', 5, 'pooled'));
    expect(short0Named).toEqual(short0Members);
    expect(long1Named).toEqual(long1Pooled);
  }, 60_000);
});
