import { describe, expect, test } from 'vitest';
import { binMatrix } from '../../models/families/svc-global/binning.ts';
import { DEFAULT_PARAMS, fitGbdt } from '../../models/families/svc-global/gbdt.ts';
import { rng } from '../../models/numerics/random.ts';
import { predictRow } from '../../models/families/svc-global/trees.ts';
import { createSvcGlobal, DEFAULT_OPTIONS, errorQuantiles, MIN_SIGNED_CALIBRATION_SERIES, svcGlobal } from '../../models/families/svc-global/svc-global.ts';
import { sortedQuantile } from '../../models/numerics/empirical-quantile.ts';
import { groupByCutoff } from '../../models/families/svc-global/cutoff-groups.ts';
import type { ForecastTask } from '../../models/contract/model-interface.ts';

const HOUR = 3_600_000;

/** Hourly series with a daily cycle and noise; times end at the same instant. */
function hourly(count: number, length: number, horizon: number, seed = 1) {
  const random = rng(seed);
  const end = Date.UTC(2024, 5, 1);
  return Array.from({ length: count }, (_, k) => {
    const phase = k % 3;
    const all = Float64Array.from({ length: length + horizon }, (_, t) => 20 + 5 * k + 6 * Math.sin((2 * Math.PI * (t + phase)) / 24) + (random() - 0.5) * 2);
    const times = Float64Array.from({ length: length + horizon }, (_, t) => end - (length - 1 - t) * HOUR);
    return { history: all.subarray(0, length), future: all.subarray(length), times };
  });
}

const task = (s: { history: Float64Array; times: Float64Array }, i: number, horizon: number, quantiles = [0.1, 0.5, 0.9]): ForecastTask => ({
  history: s.history,
  horizon,
  quantiles,
  seasonLength: 24,
  seriesIndex: i,
  times: s.times,
});

describe('gradient-boosted trees', () => {
  test('learn a non-linear function with missing values, and stop early on validation', () => {
    const n = 4000;
    const random = rng(5);
    const x = new Float64Array(n * 3);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const a = random() * 4 - 2;
      const b = random() < 0.2 ? NaN : random();
      x.set([a, b, random()], i * 3);
      y[i] = (a > 0 ? 3 : -1) + (Number.isNaN(b) ? 5 : b);
    }
    const data = binMatrix({ rows: n, features: 3, values: x }, 63, 1);
    const train = Uint32Array.from({ length: 3000 }, (_, i) => i);
    const valid = Uint32Array.from({ length: 1000 }, (_, i) => 3000 + i);
    const fit = fitGbdt(data, y, train, { ...DEFAULT_PARAMS, rounds: 400, earlyStoppingRounds: 10 }, valid);
    expect(fit.rounds).toBeLessThan(400);
    let mse = 0;
    let mean = 0;
    for (const r of valid) mean += y[r] / valid.length;
    let variance = 0;
    for (const r of valid) {
      mse += (predictRow(fit.booster, x, r * 3) - y[r]) ** 2;
      variance += (y[r] - mean) ** 2;
    }
    expect(mse / variance).toBeLessThan(0.02);
    expect(predictRow(fit.booster, Float64Array.of(1, NaN, 0.5))).toBeCloseTo(8, 0);
  });
});

describe('svc-global', () => {
  test('forecasts seasonal series far better than their mean, with ordered quantiles that cover', async () => {
    const horizon = 24;
    const data = hourly(8, 24 * 30, horizon);
    const out = await svcGlobal.forecastBatch(
      data.map((s, i) => task(s, i, horizon)),
      [],
    );
    let mae = 0;
    let meanMae = 0;
    let inside = 0;
    data.forEach((s, i) => {
      const level = s.history.reduce((a, b) => a + b, 0) / s.history.length;
      for (let j = 0; j < horizon; j++) {
        mae += Math.abs(out[i].mean[j] - s.future[j]);
        meanMae += Math.abs(level - s.future[j]);
        expect(out[i].quantiles[0][j]).toBeLessThanOrEqual(out[i].quantiles[1][j]);
        expect(out[i].quantiles[1][j]).toBeLessThanOrEqual(out[i].quantiles[2][j]);
        if (s.future[j] >= out[i].quantiles[0][j] && s.future[j] <= out[i].quantiles[2][j]) inside++;
      }
    });
    expect(mae).toBeLessThan(0.3 * meanMae);
    expect(inside / (data.length * horizon)).toBeGreaterThan(0.6);
  });

  test('the final model learns from the held-out horizon: a covariate seen only there moves the forecast', async () => {
    // A promotion adds 8 on alternate hours of each series' last 6 observed hours and of the 6 to
    // come, never before. The held-out fit cannot learn it; the refit on every row can.
    const horizon = 6;
    const length = 200;
    const random = rng(5);
    const end = Date.UTC(2024, 0, 1);
    const promo = (t: number) => (t >= length - horizon && t % 2 === 0 ? 1 : 0);
    const tasks: ForecastTask[] = Array.from({ length: 40 }, (_, i) => {
      const level = 30 + i;
      const history = Float64Array.from({ length }, (_, t) => level + 8 * promo(t) + random() * 2);
      const times = Float64Array.from({ length: length + horizon }, (_, t) => end - (length - 1 - t) * HOUR);
      const future = { promo: Array.from({ length: length + horizon }, (_, t) => promo(t)) };
      return { history, horizon, quantiles: [], seasonLength: 1, seriesIndex: i, times, covariates: { hist: {}, future, static: {} } };
    });
    const out = await svcGlobal.forecastBatch(tasks, []);
    let lift = 0;
    out.forEach(({ mean }) => {
      for (let j = 0; j < horizon; j++) lift += (promo(length + j) ? 1 : -1) * mean[j];
    });
    expect(lift / (out.length * (horizon / 2))).toBeGreaterThan(4);
  });

  test('is deterministic', async () => {
    const data = hourly(3, 24 * 10, 6);
    const tasks = data.map((s, i) => task(s, i, 6));
    const [a, b] = [await svcGlobal.forecastBatch(tasks, []), await svcGlobal.forecastBatch(tasks, [])];
    expect(Array.from(a[1].mean)).toEqual(Array.from(b[1].mean));
  });

  test('learns from string static categories which pattern a series follows', async () => {
    const horizon = 12;
    const random = rng(3);
    const end = Date.UTC(2024, 0, 1);
    const make = (kind: 'up' | 'down', length: number, i: number): ForecastTask => {
      const times = Float64Array.from({ length: length + horizon }, (_, t) => end - (length - 1 - t) * HOUR);
      const sign = kind === 'up' ? 1 : -1;
      const history = Float64Array.from({ length }, (_, t) => 50 + sign * 10 * ((t % 12) / 12) + random());
      return { history, horizon, quantiles: [], seasonLength: 12, seriesIndex: i, times, covariates: { hist: {}, future: {}, static: { kind } } };
    };
    const tasks = [...Array.from({ length: 6 }, (_, i) => make(i % 2 ? 'up' : 'down', 240, i))];
    const out = await svcGlobal.forecastBatch(tasks, []);
    const slope = (m: Float64Array) => m[10] - m[0];
    tasks.forEach((t, i) => expect(Math.sign(slope(out[i].mean))).toBe(t.covariates!.static.kind === 'up' ? 1 : -1));
  });

  test('context series inform the model without being forecast', async () => {
    const data = hourly(4, 24 * 10, 6);
    const tasks = [task(data[0], 0, 6)];
    const context = data.slice(1).map((s, k) => ({ seriesIndex: k + 1, values: s.history, times: s.times.subarray(0, s.history.length) }));
    const alone = await svcGlobal.forecastBatch(tasks, []);
    const informed = await svcGlobal.forecastBatch(tasks, context);
    expect(informed).toHaveLength(1);
    expect(Array.from(informed[0].mean)).not.toEqual(Array.from(alone[0].mean));
  });

  test('a task at an early creation date is forecast by a model that never saw later data', async () => {
    const data = hourly(3, 24 * 12, 6);
    const early = (s: (typeof data)[0], i: number): ForecastTask => ({
      ...task(s, i, 6),
      history: s.history.subarray(0, 24 * 8),
      times: s.times.subarray(0, 24 * 8 + 6),
    });
    const tasks = [early(data[0], 0), task(data[1], 1, 6), task(data[2], 2, 6)];
    const changed = data.map((s) => ({ ...s, history: Float64Array.from(s.history, (v, t) => (t >= 24 * 8 ? v * 3 : v)) }));
    const tasks2 = [early(changed[0], 0), task(changed[1], 1, 6), task(changed[2], 2, 6)];
    const model = createSvcGlobal(DEFAULT_OPTIONS);
    const [a, b] = [await model.forecastBatch(tasks, []), await model.forecastBatch(tasks2, [])];
    expect(Array.from(b[0].mean)).toEqual(Array.from(a[0].mean));
    expect(Array.from(b[1].mean)).not.toEqual(Array.from(a[1].mean));
  });

  test('a constant series among trending ones is forecast as its constant, every quantile too', async () => {
    const data = hourly(6, 24 * 8, 6);
    const flat = { ...data[0], history: new Float64Array(24 * 8).fill(500) };
    const tasks = [task(flat, 0, 6), ...data.slice(1).map((s, i) => task(s, i + 1, 6))];
    const [constant, other] = await svcGlobal.forecastBatch(tasks, []);
    expect([...constant.mean]).toEqual(Array(6).fill(500));
    for (const q of constant.quantiles) expect([...q]).toEqual(Array(6).fill(500));
    expect(new Set(other.mean).size).toBeGreaterThan(1);
  });

  test("with a context, each creation date's model learns from the windows known by its date", async () => {
    // Each task sees only its last two days (a request's context): a model trained up to an
    // earlier date than the latest window's start still has the earlier windows to learn from.
    const data = hourly(3, 24 * 12, 6);
    const windowAt = (s: (typeof data)[0], i: number, n: number): ForecastTask => ({
      ...task(s, i, 6),
      history: s.history.subarray(n - 48, n),
      times: s.times.subarray(n - 48, n + 6),
    });
    const dates = [24 * 6, 24 * 9, 24 * 12];
    const tasks = data.flatMap((s, i) => dates.map((n) => windowAt(s, i, n)));
    const out = await svcGlobal.forecastBatch(tasks, []);
    expect(out).toHaveLength(9);
    for (const [k, o] of out.entries()) {
      expect(o.mean.every(Number.isFinite), `task ${k}`).toBe(true);
      // Within the series' range: learned from its own days, not extrapolated from nothing.
      expect(Math.max(...o.mean.map((v) => Math.abs(v - (20 + 5 * Math.floor(k / 3)))))).toBeLessThan(12);
    }
  });

  test('a batch may ask for fewer models: one model then forecasts every creation date, trained up to the earliest', async () => {
    const data = hourly(3, 24 * 12, 6);
    const at = (s: (typeof data)[0], i: number, n: number): ForecastTask => ({
      ...task(s, i, 6),
      history: s.history.subarray(0, n),
      times: s.times.subarray(0, n + 6),
    });
    const tasks = [at(data[0], 0, 24 * 8), at(data[1], 1, 24 * 9), at(data[2], 2, 24 * 10), at(data[0], 0, 24 * 11)];
    const one = await createSvcGlobal({ ...DEFAULT_OPTIONS, maxModels: 1 }).forecastBatch(tasks, []);
    expect(await svcGlobal.forecastBatch(tasks, [], { options: { maxModels: 1 } })).toEqual(one);
    expect(await svcGlobal.forecastBatch(tasks, [])).not.toEqual(one);
    // Never more models than the model's own limit.
    expect(await svcGlobal.forecastBatch(tasks, [], { options: { maxModels: 9 } })).toEqual(await svcGlobal.forecastBatch(tasks, []));
  });

  test('groups creation dates into at most k models, each trained up to its earliest date', () => {
    expect(groupByCutoff([5, 1, 5, 3, 9], 2)).toEqual([
      { cutoff: 1, tasks: [1, 3] },
      { cutoff: 5, tasks: [0, 2, 4] },
    ]);
    expect(groupByCutoff([4, 4], 3)).toEqual([{ cutoff: 4, tasks: [0, 1] }]);
  });

  test('one old series does not hold back the rest: the cutoffs make the tasks least stale', () => {
    // One series ends at 0, four around 100, two around 200. Cutoffs spread over the distinct
    // dates (0, 101, 103) would leave 100 and the 200s with a model far older than themselves.
    const cutoffs = [201, 0, 100, 101, 102, 103, 200];
    expect(groupByCutoff(cutoffs, 3)).toEqual([
      { cutoff: 0, tasks: [1] },
      { cutoff: 100, tasks: [2, 3, 4, 5] },
      { cutoff: 200, tasks: [0, 6] },
    ]);
    // Two models: the old series alone, the rest together (staleness 207, against 406 for the other split).
    expect(groupByCutoff(cutoffs, 2).map((g) => g.cutoff)).toEqual([0, 100]);
    // Against every split by brute force, on dates of many weights.
    const random = rng(7);
    for (let trial = 0; trial < 50; trial++) {
      const dates = Array.from({ length: 40 }, () => Math.floor(random() * 30));
      for (const k of [1, 2, 3, 4]) {
        const staleness = (groups: { cutoff: number; tasks: number[] }[]) =>
          groups.reduce((sum, g) => sum + g.tasks.reduce((s, i) => s + dates[i] - g.cutoff, 0), 0);
        expect(staleness(groupByCutoff(dates, k))).toBe(bruteForce(dates, k));
      }
    }
    function bruteForce(dates: number[], k: number): number {
      const distinct = [...new Set(dates)].sort((a, b) => a - b);
      let best = Infinity;
      const visit = (starts: number[], next: number) => {
        if (starts.length === k || next === distinct.length) {
          const cost = dates.reduce((sum, d) => sum + d - Math.max(...starts.map((s) => distinct[s]).filter((c) => c <= d)), 0);
          best = Math.min(best, cost);
          if (starts.length === k) return;
        }
        for (let s = next; s < distinct.length; s++) visit([...starts, s], s + 1);
      };
      visit([0], 1);
      return best;
    }
  });

  test('error quantiles per step; with few errors, pooled and widened like a random walk', () => {
    const errors = Array.from({ length: 100 }, (_, i) => Float64Array.from({ length: 40 }, (_, j) => ((i - 49.5) / 50) * (j + 1)));
    const [lo, hi] = errorQuantiles(errors, 40, [0.1, 0.9]);
    expect(hi[39]).toBeGreaterThan(5 * hi[0]);
    expect(lo[0]).toBeCloseTo(-hi[0], 12);
    // Ten paths, all erring upwards: pooled over the steps, signed, so the interval sits above the mean.
    const upwards = (paths: number) => Array.from({ length: paths }, (_, i) => Float64Array.from({ length: 3 }, (_, j) => (1 + i / 10) * Math.sqrt(j + 1)));
    const [signedLo, signedHi] = errorQuantiles(upwards(MIN_SIGNED_CALIBRATION_SERIES), 3, [0.1, 0.9]);
    expect(signedLo[0]).toBeGreaterThan(0);
    expect(signedHi[2]).toBeCloseTo(Math.sqrt(3) * sortedQuantile(Float64Array.from(upwards(10), (e) => e[0]).sort(), 0.9), 12);
  });

  test('fewer paths than MIN_SIGNED_CALIBRATION_SERIES: symmetric intervals from the sizes of their errors, at the finite-sample rank', () => {
    // One path's errors over the steps, divided by sqrt(step): sizes 0.5/sqrt(4), 1, 2/sqrt(2), 3/sqrt(3).
    const one = [Float64Array.of(1, -2, 3, 0.5)];
    const levels = [0.1, 0.25, 0.5, 0.6, 0.75, 0.9];
    const quantiles = errorQuantiles(one, 4, levels);
    // The interval of coverage c reads the size at rank c (N + 1) of the N = 4 sorted ones, interpolated, the largest past it.
    const sizes = [0.25, 1, Math.SQRT2, Math.sqrt(3)];
    const offsets = [-sizes[3], -(sizes[1] + sizes[2]) / 2, 0, sizes[0], (sizes[1] + sizes[2]) / 2, sizes[3]];
    for (let j = 0; j < 4; j++) levels.forEach((_, l) => expect(quantiles[l][j]).toBeCloseTo(Math.sqrt(j + 1) * offsets[l], 12));
    // Nine paths all erring upwards still straddle the mean.
    const nine = Array.from({ length: MIN_SIGNED_CALIBRATION_SERIES - 1 }, (_, i) => Float64Array.of(1 + i, 2 + i));
    const [nineLo, nineHi] = errorQuantiles(nine, 2, [0.1, 0.9]);
    expect(nineLo[1]).toBeLessThan(0);
    expect(nineHi[1]).toBeCloseTo(-nineLo[1], 12);
  });

  test('one series alone: its intervals hold its mean at every step', async () => {
    const y = Float64Array.from({ length: 40 }, (_, t) => 100 + 3 * t + 5 * Math.sin(t / 3));
    const task: ForecastTask = {
      history: y,
      horizon: 8,
      quantiles: [0.1, 0.5, 0.9],
      seasonLength: 4,
      seasonLengths: [4],
      seriesIndex: 0,
      times: Float64Array.from({ length: 48 }, (_, t) => Date.UTC(2000, 3 * t, 1)),
    };
    const [out] = await svcGlobal.forecastBatch([task], []);
    for (let j = 0; j < 8; j++) {
      expect(out.quantiles[0][j]).toBeLessThan(out.mean[j]);
      expect(out.quantiles[1][j]).toBeCloseTo(out.mean[j], 9);
      expect(out.quantiles[2][j]).toBeGreaterThan(out.mean[j]);
    }
  });
});
