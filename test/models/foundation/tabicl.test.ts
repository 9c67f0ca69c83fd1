import { describe, expect, it } from 'vitest';
import { forecastTabICL, predictTabICL } from '../../../models/families/foundation/tabicl.ts';
import { ensembleMembers, PythonRandom, yeoJohnsonLambda } from '../../../models/families/foundation/tabicl-ensemble.ts';
import { detectPeriods, featureTable } from '../../../models/families/foundation/tabicl-features.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  context_length: number;
  regressor: { n_estimators: number };
  cases: {
    name: string;
    horizon: number;
    levels: number[];
    /** times: epoch milliseconds of the history then the horizon steps. */
    series: { target: JsonSeries; times: number[]; future?: Record<string, JsonSeries> }[];
    /** mean [series][step]; quantiles [series][level][step] at the case's levels. */
    expected: { mean: JsonSeries[]; quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('tabicl');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('tabicl');

type Case = Reference['cases'][number];

const taskOf = (c: Case, s: Case['series'][number], quantiles = c.levels): ForecastTask => ({
  history: toFloat64(s.target),
  horizon: c.horizon,
  quantiles,
  seasonLength: 1,
  times: Float64Array.from(s.times),
  ...(s.future && {
    covariates: { hist: {}, static: {}, future: Object.fromEntries(Object.entries(s.future).map(([k, v]) => [k, Array.from(toFloat64(v))])) },
  }),
});

describe('tabicl adapter against TabICLForecaster.predict_df (tabicl 2.2.0, default 8-member ensemble; tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, long horizons, covariates, tail levels and a batch', () => {
    const byName = new Map(reference.cases.map((c) => [c.name, c]));
    for (const name of ['missing_values', 'short_histories', 'long_horizon', 'longer_than_context', 'daily', 'covariates', 'tail_levels', 'batch_of_40'])
      expect(byName.has(name)).toBe(true);
    expect(reference.regressor).toEqual(manifest.regressor);
    expect(reference.context_length).toBe(manifest.context_length);
    expect(byName.get('missing_values')!.series.some((s) => s.target[0] === null)).toBe(true);
    expect(byName.get('longer_than_context')!.series[0].target.length).toBeGreaterThan(manifest.context_length);
    // Levels outside the network's own (1/1000 .. 999/1000) read the exponential tails.
    expect(Math.min(...byName.get('tail_levels')!.levels)).toBeLessThan(1 / (manifest.num_quantiles + 1));
    expect(Math.max(...byName.get('tail_levels')!.levels)).toBeGreaterThan(manifest.num_quantiles / (manifest.num_quantiles + 1));
  });

  for (const c of reference.cases) {
    it(`${c.name}: the mean and the quantiles within ${TOLERANCE} relative error`, async () => {
      const agreement = new Agreement();
      for (const [i, s] of c.series.entries()) {
        const task = taskOf(c, s);
        const got = await predictTabICL(run, manifest, task);
        const floor = level(task.history);
        agreement.add(got.mean, c.expected.mean[i], `series ${i} mean`, floor);
        got.quantiles.forEach((values, k) => agreement.add(values, c.expected.quantiles[i][k], `series ${i} level ${c.levels[k]}`, floor));
      }
      console.log(`tabicl ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('forecasts a batch of tasks of mixed horizons in input order', async () => {
    const cases = ['basic', 'long_horizon', 'daily'].map((name) => reference.cases.find((x) => x.name === name)!);
    const tasks = cases.flatMap((c) => c.series.map((s) => taskOf(c, s)));
    const out = await forecastTabICL(run, manifest, tasks);
    const expected = cases.flatMap((c) => c.expected.mean);
    const agreement = new Agreement();
    out.forEach((f, i) => agreement.add(f.mean, expected[i], `task ${i} mean`, level(tasks[i].history)));
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
  });

  it('gives the same forecast with one ensemble member per network call (long tables)', async () => {
    const c = reference.cases.find((x) => x.name === 'covariates')!;
    const task = taskOf(c, c.series[0]);
    const together = await predictTabICL(run, manifest, task);
    const apart = await predictTabICL(run, manifest, task, 1);
    const agreement = new Agreement();
    agreement.add(apart.mean, Array.from(together.mean), 'mean', level(task.history));
    apart.quantiles.forEach((q, k) => agreement.add(q, Array.from(together.quantiles[k]), `level ${k}`, level(task.history)));
    expect(agreement.worst, agreement.where).toBeLessThan(1e-6);
  });

  it('builds the pipeline table: the features a step depends on, NaN rows dropped, the context cut', () => {
    const c = reference.cases.find((x) => x.name === 'missing_values')!;
    const task = taskOf(c, c.series[0]);
    const table = featureTable(task, manifest.context_length, manifest.periodic);
    const observed = Array.from(task.history).filter((v) => !Number.isNaN(v)).length;
    expect(table.targets.length).toBe(Math.min(observed, manifest.context_length));
    expect(table.rows).toBe(table.targets.length + c.horizon);
    // running_index counts the table's rows, not the time steps: gaps close up.
    expect(table.features[(table.rows - 1) * table.columns]).toBe(table.rows - 1);
    // A single observed value: the missing ones become 0 and every step stays a row.
    const single = taskOf(c, c.series[1]);
    expect(featureTable(single, manifest.context_length, manifest.periodic).targets.filter((v) => v === 0).length).toBe(single.history.length - 1);
  });

  it("draws CPython's random numbers (the ensemble's feature orders come from random.Random(42))", () => {
    // Python 3.11: r = random.Random(42); [r._randbelow(n) for n in (10, 1000, 7, 2**31, 3)], then a shuffle of range(10).
    const r = new PythonRandom(42);
    expect([10, 1000, 7, 2 ** 31, 3].map((n) => r.randbelow(n))).toEqual([1, 25, 5, 1181241943, 0]);
    const x = Array.from({ length: 10 }, (_, i) => i);
    new PythonRandom(42).shuffle(x);
    expect(x).toEqual([7, 3, 2, 8, 5, 6, 9, 4, 0, 1]);
    // A seed past 32 bits is split into words, as random.seed does.
    const big = new PythonRandom(12345678901);
    expect(Array.from({ length: 5 }, () => big.randbelow(100))).toEqual([76, 41, 49, 45, 68]);
  });

  it("pairs EnsembleGenerator's Latin-square feature orders with the normalisations as the package does", () => {
    // tabicl 2.2.0: EnsembleGenerator(n_estimators=8, norm_methods=["none", "power"], feat_shuffle_method="latin",
    // random_state=42) fitted on 5 columns; each order is used with both normalisations.
    const orders = [
      [4, 3, 0, 1, 2],
      [3, 2, 1, 4, 0],
      [2, 0, 4, 3, 1],
      [1, 4, 2, 0, 3],
    ];
    const members = ensembleMembers(5, manifest.regressor);
    expect(members).toEqual(
      orders.flatMap((order) => [
        { order, norm: 'none' },
        { order, norm: 'power' },
      ]),
    );
  });

  it("finds scipy's Yeo-Johnson lambda (yeojohnson_normmax, scipy 1.17)", () => {
    // scipy.stats.yeojohnson_normmax([-2, -0.5, 0, 0.3, 1, 2.5, 4, 9]) = 0.49244650976589177 (scipy 1.17.1).
    expect(yeoJohnsonLambda([-2, -0.5, 0, 0.3, 1, 2.5, 4, 9])).toBeCloseTo(0.49244650976589177, 9);
  });

  it('detects the period of a clean season, strongest first', () => {
    const values = Float64Array.from({ length: 96 }, (_, t) => 10 * Math.sin((2 * Math.PI * t) / 24) + 3 * Math.sin((2 * Math.PI * t) / 8));
    expect(detectPeriods(values, manifest.periodic).slice(0, 2)).toEqual([24, 8]);
  });

  it('takes a task without timestamps as hourly from 2024-01-01, as reference_forecast does; refuses past-only covariates', () => {
    const c = reference.cases.find((x) => x.name === 'basic')!;
    const timed = taskOf(c, c.series[0]);
    const { times: _, ...untimed } = timed;
    const hourly = { ...timed, times: Float64Array.from(timed.times!, (_, i) => Date.UTC(2024, 0, 1) + i * 3_600_000) };
    expect(featureTable(untimed, manifest.context_length, manifest.periodic)).toEqual(featureTable(hourly, manifest.context_length, manifest.periodic));
    const pastOnly = { ...timed, covariates: { hist: { x: [1] }, future: {}, static: {} } };
    expect(() => featureTable(pastOnly, manifest.context_length, manifest.periodic)).toThrow(ModelInputError);
    expect(() => featureTable(pastOnly, manifest.context_length, manifest.periodic)).toThrow(/known-future covariates only/);
  });
});
