import { describe, expect, it } from 'vitest';
import { forecastTirex2, predictTirex2, tirex2Series, type Tirex2Series } from '../../../models/families/foundation/tirex2.ts';
import { Tirex2Manifest } from '../../../models/families/foundation/model-store.ts';
import { isTrending } from '../../../models/families/foundation/tirex2-post.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  cases: {
    name: string;
    horizon: number;
    options?: { tta_sign_flip?: boolean };
    series: { target: JsonSeries; past?: Record<string, JsonSeries>; future?: Record<string, JsonSeries> }[];
    /** The reference's `PostProcessor._detect_trends` of each target. */
    differenced: boolean[];
    /** `ForecastModel.forecast`'s output, [series][level][step]. */
    expected: { quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('tirex-2');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('tirex-2');
const byName = new Map(reference.cases.map((c) => [c.name, c]));

/** A recorded covariate (observed everywhere) as the service's values. */
const numbers = (values: JsonSeries): number[] => Array.from(toFloat64(values));

/** The levels of step t in increasing order. */
const sortedAt = (levels: readonly ArrayLike<number>[], t: number): number[] => levels.map((q) => q[t]).sort((a, b) => a - b);

const asSeries = (s: Reference['cases'][number]['series'][number]): Tirex2Series => ({
  target: toFloat64(s.target),
  past: Object.keys(s.past ?? {})
    .sort()
    .map((k) => toFloat64(s.past![k])),
  future: Object.keys(s.future ?? {})
    .sort()
    .map((k) => toFloat64(s.future![k])),
});

describe('tirex-2 adapter against ForecastModel.forecast (tirex-2 0.4.0 on the CPU; tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short and cut histories, the native horizon, trends, covariates, sign flips and a batch', () => {
    const names = [
      'basic',
      'missing_values',
      'short_histories',
      'long_history',
      'trending',
      'covariates',
      'future_covariates',
      'past_covariates',
      'sign_flip',
      'batch_of_40',
    ];
    for (const name of names) expect(byName.has(name)).toBe(true);
    expect(byName.get('long_history')!.horizon).toBe(manifest.future_length);
    expect(Math.min(...byName.get('long_history')!.series.map((s) => s.target.length))).toBeGreaterThan(manifest.context_length);
    const missing = byName.get('missing_values')!.series;
    expect(missing.some((s) => s.target[0] === null) && missing.some((s) => s.target.at(-1) === null)).toBe(true);
    expect(Math.min(...byName.get('short_histories')!.series.map((s) => s.target.length))).toBe(1);
    expect(byName.get('trending')!.differenced.filter(Boolean).length).toBeGreaterThanOrEqual(3);
    expect(byName.get('covariates')!.series.every((s) => s.past && s.future)).toBe(true);
    expect(byName.get('sign_flip')!.options?.tta_sign_flip).toBe(true);
    expect(byName.get('batch_of_40')!.series).toHaveLength(40);
  });

  it("detects the trends the reference's post-processor detects (which targets are differenced)", () => {
    for (const c of reference.cases) {
      const got = c.series.map((s) => isTrending(Float32Array.from(toFloat64(s.target)), manifest.forecast_config));
      expect(got, c.name).toEqual(c.differenced);
    }
  });

  for (const c of reference.cases) {
    it(`${c.name}: the 9 quantile levels within ${TOLERANCE} relative error`, async () => {
      const m = c.options?.tta_sign_flip ? { ...manifest, forecast_config: { ...manifest.forecast_config, tta_sign_flip: true } } : manifest;
      const series = c.series.map(asSeries);
      const forecasts = await predictTirex2(
        run,
        m,
        series,
        series.map(() => c.horizon),
      );
      const agreement = new Agreement();
      forecasts.forEach((f, i) => {
        const floor = level(series[i].target);
        manifest.quantile_levels.forEach((q, k) => agreement.add(f.quantiles[k], c.expected.quantiles[i][k], `series ${i} level ${q}`, floor));
        expect(Array.from(f.median)).toEqual(Array.from(f.quantiles[manifest.quantile_levels.indexOf(0.5)]));
      });
      console.log(`tirex-2 ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('forecasts a series alike alone and in a batch of other horizons, and maps the model levels to the requested ones', async () => {
    const c = byName.get('batch_of_40')!;
    const tasks: ForecastTask[] = c.series.map((s, i) => ({
      history: toFloat64(s.target),
      horizon: i === 7 ? c.horizon : 1 + (i % manifest.future_length),
      quantiles: [0.1, 0.5, 0.9],
      seasonLength: 1,
    }));
    const together = await forecastTirex2(run, manifest, tasks);
    expect(together.map((o) => o.mean.length)).toEqual(tasks.map((t) => t.horizon));
    const [alone] = await forecastTirex2(run, manifest, [tasks[7]]);
    const agreement = new Agreement();
    agreement.add(alone.mean, Array.from(together[7].mean), 'median', level(tasks[7].history));
    together[7].quantiles.forEach((q, j) => agreement.add(alone.quantiles[j], Array.from(q), `quantile ${j}`, level(tasks[7].history)));
    expect(agreement.worst, agreement.where).toBeLessThan(1e-5);
    const [direct] = await predictTirex2(run, manifest, [tirex2Series(tasks[7])], [c.horizon]);
    // The point is the 0.5 level; the levels are the model's at each step in increasing order
    // (quantiles.ts sorts crossed levels, which the random fixture has), interpolated between.
    expect(Array.from(alone.mean)).toEqual(Array.from(direct.median));
    const [between] = await forecastTirex2(run, manifest, [{ ...tasks[7], quantiles: [0.25] }]);
    for (let t = 0; t < c.horizon; t++) {
      const sorted = sortedAt(direct.quantiles, t);
      [0.1, 0.5, 0.9].forEach((q, j) => expect(alone.quantiles[j][t]).toBe(sorted[manifest.quantile_levels.indexOf(q)]));
      expect(between.quantiles[0][t]).toBeCloseTo((sorted[1] + sorted[2]) / 2, 6);
    }
  });

  it('takes the service covariates in name order as the reference rows: past-only as historical, known-future as future', async () => {
    const c = byName.get('covariates')!;
    const s = c.series[0];
    const task: ForecastTask = {
      history: toFloat64(s.target),
      horizon: c.horizon,
      quantiles: [...manifest.quantile_levels],
      seasonLength: 1,
      covariates: {
        hist: { temperature: numbers(s.past!.temperature) },
        future: { promo: numbers(s.future!.promo), price: numbers(s.future!.price) },
        static: {},
      },
    };
    const [got] = await forecastTirex2(run, manifest, [task]);
    const expected = c.expected.quantiles[0].map(toFloat64);
    const agreement = new Agreement();
    agreement.add(got.mean, c.expected.quantiles[0][manifest.quantile_levels.indexOf(0.5)], 'median', level(task.history));
    got.quantiles.forEach((q, k) =>
      agreement.add(
        q,
        Array.from({ length: c.horizon }, (_, t) => sortedAt(expected, t)[k]),
        `level ${k}`,
        level(task.history),
      ),
    );
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
  });

  it('refuses static covariates, misaligned ones and a horizon past the native one', async () => {
    const task: ForecastTask = { history: Float64Array.of(1, 2, 3), horizon: 2, quantiles: [0.5], seasonLength: 1 };
    await expect(forecastTirex2(run, manifest, [{ ...task, covariates: { hist: {}, future: {}, static: { store: 1 } } }])).rejects.toBeInstanceOf(
      ModelInputError,
    );
    await expect(forecastTirex2(run, manifest, [{ ...task, covariates: { hist: {}, future: { x: [1, 2, 3] }, static: {} } }])).rejects.toThrow(
      'future covariate',
    );
    await expect(predictTirex2(run, manifest, [{ target: task.history }], [manifest.future_length + 1])).rejects.toThrow(`at most ${manifest.future_length}`);
  });

  it('validates its manifest: a native horizon of whole patches, the 0.5 level, symmetric levels for sign flips', () => {
    expect(Tirex2Manifest.safeParse(manifest).success).toBe(true);
    expect(Tirex2Manifest.safeParse({ ...manifest, future_length: manifest.future_length + 1 }).success).toBe(false);
    expect(Tirex2Manifest.safeParse({ ...manifest, quantile_levels: [0.1, 0.9] }).success).toBe(false);
    const flip = { ...manifest, forecast_config: { ...manifest.forecast_config, tta_sign_flip: true } };
    expect(Tirex2Manifest.safeParse(flip).success).toBe(true);
    expect(Tirex2Manifest.safeParse({ ...flip, quantile_levels: [0.1, 0.5, 0.8] }).success).toBe(false);
  });
});
