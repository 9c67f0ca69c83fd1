import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forecastChronos2, predictChronos2, chronos2Input } from '../../../models/families/foundation/chronos2.ts';
import { requireInstalled } from '../../../models/families/foundation/model-store.ts';
import type { ForecastTask, TaskCovariates } from '../../../models/contract/model-interface.ts';
import { Agreement, FIXTURES_DIR, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  cases: {
    name: string;
    cross_learning?: boolean;
    horizon: number;
    quantiles: number[];
    series: { target: JsonSeries; covariates?: { hist: Record<string, JsonSeries>; future: Record<string, JsonSeries> } }[];
    expected: { model_quantiles: JsonSeries[][]; quantiles: JsonSeries[][]; mean: JsonSeries[] };
  }[];
}

const reference = readReference<Reference>('chronos-2');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('chronos-2');

function tasksOf(c: Reference['cases'][number]): ForecastTask[] {
  return c.series.map((s) => {
    const covariates: TaskCovariates | undefined = s.covariates && {
      hist: Object.fromEntries(Object.entries(s.covariates.hist).map(([k, v]) => [k, Array.from(toFloat64(v))])),
      future: Object.fromEntries(Object.entries(s.covariates.future).map(([k, v]) => [k, Array.from(toFloat64(v))])),
      static: {},
    };
    return { history: toFloat64(s.target), horizon: c.horizon, quantiles: c.quantiles, seasonLength: 1, ...(covariates && { covariates }) };
  });
}

describe('chronos-2 adapter against Chronos2Pipeline (tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, long horizons and covariates', () => {
    const names = reference.cases.map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'missing_values',
        'short_histories',
        'long_horizon',
        'covariates',
        'covariates_long_horizon',
        'cross_learning',
        'cross_learning_long_horizon',
      ]),
    );
    const native = manifest.max_output_patches * manifest.output_patch_size;
    expect(reference.cases.find((c) => c.name === 'long_horizon')!.horizon).toBeGreaterThan(2 * native);
    expect(reference.cases.find((c) => c.name === 'covariates_long_horizon')!.horizon).toBeGreaterThan(native);
  });

  for (const c of reference.cases) {
    it(`${c.name}: model quantiles, mean and requested quantiles within ${TOLERANCE} relative error`, async () => {
      const tasks = tasksOf(c);
      const joint = c.cross_learning ?? false;
      const native = await predictChronos2(run, manifest, tasks.map(chronos2Input), c.horizon, joint);
      const nativeAgreement = new Agreement();
      native.forEach((perLevel, i) =>
        perLevel.forEach((values, q) =>
          nativeAgreement.add(values, c.expected.model_quantiles[i][q], `series ${i} level ${manifest.quantile_levels[q]}`, level(tasks[i].history)),
        ),
      );

      const outputs = await forecastChronos2(run, manifest, tasks, { crossLearning: joint });
      const output = new Agreement();
      outputs.forEach((o, i) => {
        const floor = level(tasks[i].history);
        output.add(o.mean, c.expected.mean[i], `series ${i} mean`, floor);
        o.quantiles.forEach((values, k) => output.add(values, c.expected.quantiles[i][k], `series ${i} quantile ${c.quantiles[k]}`, floor));
      });
      console.log(
        `chronos-2 ${c.name}: ${nativeAgreement.count + output.count} values, max relative error ${Math.max(nativeAgreement.worst, output.worst).toExponential(2)}`,
      );
      expect(nativeAgreement.worst, nativeAgreement.where).toBeLessThan(TOLERANCE);
      expect(output.worst, output.where).toBeLessThan(TOLERANCE);
    });
  }

  it('gives each task the same forecast alone as in a batch (groups do not mix)', async () => {
    const c = reference.cases.find((x) => x.name === 'covariates')!;
    const tasks = tasksOf(c);
    const together = await forecastChronos2(run, manifest, tasks);
    const alone = await forecastChronos2(run, manifest, [tasks[1]]);
    const agreement = new Agreement();
    agreement.add(alone[0].mean, Array.from(together[1].mean), 'mean');
    expect(agreement.worst).toBeLessThan(TOLERANCE);
  });
});

describe('chronos-2 cross-learning (is_global)', () => {
  const HOUR = 3_600_000;
  const series = (seed: number, n: number) => Float64Array.from({ length: n }, (_, i) => 50 + 10 * Math.sin(i / (3 + seed)) + ((i * (seed + 7)) % 11));
  const timed = (history: Float64Array, end: number, horizon = 12): ForecastTask => ({
    history,
    horizon,
    quantiles: [0.1, 0.5, 0.9],
    seasonLength: 1,
    times: Float64Array.from({ length: history.length + horizon }, (_, i) => end + (i - history.length + 1) * HOUR),
  });
  const mean = (o: { mean: Float64Array }) => Array.from(o.mean);

  it('lets series of one creation time inform each other, and only with is_global', async () => {
    const [a, b] = [timed(series(1, 60), 0), timed(series(2, 50), 0)];
    const [alone] = await forecastChronos2(run, manifest, [a], { crossLearning: true });
    const [joint] = await forecastChronos2(run, manifest, [a, b], { crossLearning: true });
    const [separate] = await forecastChronos2(run, manifest, [a, b]);
    expect(mean(joint)).not.toEqual(mean(alone));
    expect(mean(separate)).toEqual(mean(alone));
  });

  it("never mixes creation times: a backtest forecast does not learn from another series' later values", async () => {
    const a = timed(series(1, 60), 0);
    const later = timed(series(2, 50), 24 * HOUR);
    const [alone] = await forecastChronos2(run, manifest, [a], { crossLearning: true });
    const [withLater] = await forecastChronos2(run, manifest, [a, later], { crossLearning: true });
    expect(mean(withLater)).toEqual(mean(alone));
  });

  it('feeds only_as_context series cut at the creation time', async () => {
    const a = timed(series(1, 60), 0);
    const contextValues = series(3, 80);
    // The context series runs 20 hours past the task's creation time.
    const context = (values: Float64Array) => [{ seriesIndex: 9, values, times: Float64Array.from(values, (_, i) => (i - 59) * HOUR) }];
    const [alone] = await forecastChronos2(run, manifest, [a], { crossLearning: true });
    const [informed] = await forecastChronos2(run, manifest, [a], { crossLearning: true, context: context(contextValues) });
    expect(mean(informed)).not.toEqual(mean(alone));
    const changedFuture = contextValues.map((v, i) => (i >= 60 ? v * 100 : v));
    const [sameInformation] = await forecastChronos2(run, manifest, [a], { crossLearning: true, context: context(changedFuture) });
    expect(mean(sameInformation)).toEqual(mean(informed));
    const [ignored] = await forecastChronos2(run, manifest, [a], { context: context(contextValues) });
    expect(mean(ignored)).toEqual(mean(alone));
  });
});

describe('chronos-2 covariates constant over the history', () => {
  const history = Float64Array.from({ length: 40 }, (_, i) => 100 + 10 * Math.sin(i / 3) + (i % 5));
  const task = (hist: number[], future: number[]): ForecastTask => ({
    history,
    horizon: 40,
    quantiles: [0.1, 0.5, 0.9],
    seasonLength: 1,
    covariates: { hist: { flat: hist }, future: { holiday: future }, static: {} },
  });
  const flatFuture = (level: number) => [...new Array(40).fill(level), ...Array.from({ length: 40 }, (_, i) => level + (i % 7 === 0 ? 1 : 0))];

  it('give the same forecast whatever their level (the model scales each row by its own mean)', async () => {
    const [a, b] = await Promise.all([
      forecastChronos2(run, manifest, [task(new Array(40).fill(3), flatFuture(0))]),
      forecastChronos2(run, manifest, [task(new Array(40).fill(1234.5), flatFuture(17.25))]),
    ]);
    expect(Array.from(b[0].mean)).toEqual(Array.from(a[0].mean));
    expect(b[0].quantiles.map((q) => Array.from(q))).toEqual(a[0].quantiles.map((q) => Array.from(q)));
    // ... and the known future values do reach the model: another future changes the forecast.
    const c = await forecastChronos2(run, manifest, [task(new Array(40).fill(3), [...new Array(40).fill(0), ...new Array(40).fill(1)])]);
    expect(Array.from(c[0].mean)).not.toEqual(Array.from(a[0].mean));
  });
});

it('reads the fixture folder as a model directory', () => {
  expect(path.basename(requireInstalled('chronos-2', FIXTURES_DIR).folder)).toBe('chronos-2');
});
