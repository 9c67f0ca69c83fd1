import { describe, expect, it } from 'vitest';
import { mapQuantileSteps } from '../../../models/families/foundation/quantiles.ts';
import { causalMeanImpute, forecastMoirai2, predictMoirai2, type Moirai2Input } from '../../../models/families/foundation/moirai2.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  context_length: number;
  cases: {
    name: string;
    horizon: number;
    series: { target: JsonSeries; future?: Record<string, JsonSeries>; past?: Record<string, JsonSeries> }[];
    /** point [series][step]; quantiles [series][level][step] at the manifest's levels. */
    expected: { point: JsonSeries[]; quantiles: JsonSeries[][] };
  }[];
}

const reference = readReference<Reference>('moirai-2');
const TOLERANCE = 1e-4;

const { manifest, run } = useFixtureModel('moirai-2');

const byName = (record: Record<string, JsonSeries> = {}) =>
  Object.keys(record)
    .sort()
    .map((k) => toFloat64(record[k]));

const inputOf = (s: Reference['cases'][number]['series'][number]): Moirai2Input => ({
  target: toFloat64(s.target),
  future: byName(s.future),
  past: byName(s.past),
});

/** The series' level after the reference's imputation: the magnitude its forecasts carry. */
const floorOf = (target: Float64Array) => Math.max(level(causalMeanImpute(Float32Array.from(target))), 1e-3);

describe('moirai-2 adapter against Moirai2Forecast.create_predictor (tiny fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, the roll-out, covariates and a batch', () => {
    const names = new Set(reference.cases.map((c) => c.name));
    for (const name of [
      'missing_values',
      'all_missing',
      'short_histories',
      'long_horizon',
      'longer_horizon',
      'covariates',
      'covariates_long_horizon',
      'batch_of_40',
    ])
      expect(names.has(name), name).toBe(true);
    expect(reference.context_length).toBe(manifest.context_length);
    const native = manifest.num_predict_token * manifest.patch_size;
    // Two and three roll-out calls past the native horizon.
    expect(reference.cases.find((c) => c.name === 'long_horizon')!.horizon).toBeGreaterThan(2 * native);
    expect(reference.cases.find((c) => c.name === 'longer_horizon')!.horizon).toBeGreaterThan(4 * native);
    expect(reference.cases.find((c) => c.name === 'covariates_long_horizon')!.horizon).toBeGreaterThan(2 * native);
  });

  for (const c of reference.cases) {
    it(`${c.name}: the ${manifest.quantile_levels.length} quantiles and the point forecast within ${TOLERANCE} relative error`, async () => {
      const inputs = c.series.map(inputOf);
      const forecasts = await predictMoirai2(run, manifest, inputs, c.horizon);
      const agreement = new Agreement();
      forecasts.forEach((f, i) => {
        const floor = floorOf(inputs[i].target);
        agreement.add(f.point, c.expected.point[i], `series ${i} point`, floor);
        f.quantiles.forEach((values, q) => agreement.add(values, c.expected.quantiles[i][q], `series ${i} level ${manifest.quantile_levels[q]}`, floor));
      });
      console.log(`moirai-2 ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it('answers tasks with the mean as the median and the requested levels, covariates from task fields', async () => {
    const c = reference.cases.find((x) => x.name === 'covariates')!;
    const tasks: ForecastTask[] = c.series.map((s) => {
      const history = toFloat64(s.target);
      return {
        history,
        horizon: c.horizon,
        quantiles: [0.9, 0.1, 0.5],
        seasonLength: 1,
        covariates: {
          hist: Object.fromEntries(Object.entries(s.past!).map(([k, v]) => [k, Array.from(toFloat64(v))])),
          future: Object.fromEntries(Object.entries(s.future!).map(([k, v]) => [k, Array.from(toFloat64(v))])),
          static: {},
        },
      };
    });
    // With a plain task of another horizon in between: grouped apart, answered in order.
    const plain: ForecastTask = { history: toFloat64(c.series[0].target), horizon: 5, quantiles: [0.5], seasonLength: 1 };
    const out = await forecastMoirai2(run, manifest, [tasks[0], plain, ...tasks.slice(1)]);
    const agreement = new Agreement();
    [out[0], ...out.slice(2)].forEach((o, i) => {
      const floor = level(tasks[i].history);
      agreement.add(o.mean, c.expected.point[i], 'mean', floor);
      // The requested levels from the reference's, by the service's monotone mapping (the tiny
      // model's random head may cross its quantiles; the mapping orders them first).
      const wanted = mapQuantileSteps(manifest.quantile_levels, (q) => toFloat64(c.expected.quantiles[i][q]), tasks[i].quantiles, c.horizon);
      wanted.forEach((values, k) => agreement.add(o.quantiles[k], Array.from(values), `level ${tasks[i].quantiles[k]}`, floor));
    });
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    expect(out[1].mean).toHaveLength(5);
  });

  it('gives a series the same forecast alone as in a batch', async () => {
    const c = reference.cases.find((x) => x.name === 'batch_of_40')!;
    const [alone] = await predictMoirai2(run, manifest, [inputOf(c.series[7])], c.horizon);
    const agreement = new Agreement();
    agreement.add(alone.point, c.expected.point[7], 'point', floorOf(toFloat64(c.series[7].target)));
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
  });

  it('refuses static variables, text values and horizons past its time table, rather than dropping them', async () => {
    const plain: ForecastTask = { history: Float64Array.of(1, 2, 3), horizon: 2, quantiles: [0.5], seasonLength: 1 };
    await expect(forecastMoirai2(run, manifest, [{ ...plain, covariates: { hist: {}, future: {}, static: { size: 3 } } }])).rejects.toBeInstanceOf(
      ModelInputError,
    );
    const text = { hist: {}, future: { day: ['a', 'b', 'a', 'b', 'a'] }, static: {} };
    await expect(forecastMoirai2(run, manifest, [{ ...plain, covariates: text }])).rejects.toBeInstanceOf(ModelInputError);
    const tooLong = (manifest.max_time_tokens - manifest.context_length / manifest.patch_size) * manifest.patch_size + 1;
    await expect(forecastMoirai2(run, manifest, [{ ...plain, horizon: tooLong }])).rejects.toBeInstanceOf(ModelInputError);
  });
});

describe('causalMeanImpute (gluonts CausalMeanValueImputation)', () => {
  it('fills a gap with the mean of the values before it, forward-filled, and leading gaps with the first value', () => {
    expect(Array.from(causalMeanImpute(Float32Array.of(NaN, 2, NaN, 4, NaN)))).toEqual([2, 2, 2, 4, 2.5]);
  });
  it('gives zeros for a series with no observation', () => {
    expect(Array.from(causalMeanImpute(Float32Array.of(NaN, NaN)))).toEqual([0, 0]);
  });
});
