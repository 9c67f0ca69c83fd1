import { describe, expect, it } from 'vitest';
import { causalMeanImpute, type MoiraiInput } from '../../../models/families/foundation/moirai-common.ts';
import { mixtureCdf, mixtureQuantile } from '../../../models/families/foundation/moirai-mixture.ts';
import { forecastMoiraiMoE, patchParams, predictMoiraiMoE } from '../../../models/families/foundation/moirai-moe.ts';
import { ModelInputError, type ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  context_length: number;
  levels: number[];
  cases: {
    name: string;
    horizon: number;
    series: { target: JsonSeries; future?: Record<string, JsonSeries>; past?: Record<string, JsonSeries> }[];
    /** The reference module's first-patch distribution: quantiles [series][level][step] by inversion, its mean [series][step]. */
    first_patch: { quantiles: JsonSeries[][]; mean: JsonSeries[] };
    /** Sampled paths [series][path][step] and the distributions they were drawn from: [series][path][patch - 1][level][step]. */
    paths?: { values: JsonSeries[][]; quantiles: JsonSeries[][][][] };
    /** The pipeline with many samples: quantiles [series][level][step], mean [series][step]. */
    sampled: { num_samples: number; quantiles: JsonSeries[][]; mean: JsonSeries[] };
  }[];
}

const reference = readReference<Reference>('moirai-moe');
const TOLERANCE = 1e-4;
const { manifest, run } = useFixtureModel('moirai-moe');
const P = manifest.patch_size;
const CHANNELS = 14;

const byName = (record: Record<string, JsonSeries> = {}) =>
  Object.keys(record)
    .sort()
    .map((k) => toFloat64(record[k]));
const inputOf = (s: Reference['cases'][number]['series'][number]): MoiraiInput => ({
  target: toFloat64(s.target),
  future: byName(s.future),
  past: byName(s.past),
});
const floorOf = (target: Float64Array) => Math.max(level(causalMeanImpute(Float32Array.from(target))), 1e-3);
const stepOf = (params: Float32Array, t: number) => params.subarray(t * CHANNELS, (t + 1) * CHANNELS);

describe('moirai-moe adapter against MoiraiMoEForecast (tiny fixture, fixed random weights)', () => {
  it('has a fixture with missing values, short histories, counts, covariates, roll-outs and a batch', () => {
    const names = new Set(reference.cases.map((c) => c.name));
    for (const name of ['missing_values', 'short_histories', 'counts', 'batch_of_40', 'long_horizon', 'covariates', 'covariates_long_horizon'])
      expect(names.has(name), name).toBe(true);
    expect(reference.context_length).toBe(manifest.context_length);
    expect(reference.cases.find((c) => c.name === 'long_horizon')!.horizon).toBeGreaterThan(2 * P);
  });

  for (const c of reference.cases) {
    it(`${c.name}: the first patch's quantiles (CDF inversion) and mean within ${TOLERANCE} of the reference's distribution`, async () => {
      const inputs = c.series.map(inputOf);
      // The whole horizon: known-future covariates are scaled over it, which the first patch sees.
      const forecasts = await predictMoiraiMoE(run, manifest, inputs, c.horizon, reference.levels, { numSamples: 10 });
      const steps = Math.min(c.horizon, P);
      const agreement = new Agreement();
      forecasts.forEach((f, i) => {
        const floor = floorOf(inputs[i].target);
        agreement.add(f.mean.subarray(0, steps), c.first_patch.mean[i], `series ${i} mean`, floor);
        f.quantiles.forEach((values, q) =>
          agreement.add(values.subarray(0, steps), c.first_patch.quantiles[i][q], `series ${i} level ${reference.levels[q]}`, floor),
        );
      });
      console.log(`moirai-moe ${c.name} first patch: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  for (const c of reference.cases.filter((x) => x.paths)) {
    it(`${c.name}: given the reference's own sampled paths, each later patch's distribution within ${TOLERANCE}`, async () => {
      const inputs = c.series.map(inputOf);
      const paths = c.paths!;
      const agreement = new Agreement();
      const patches = paths.quantiles[0][0].length;
      for (let s = 0; s < paths.values[0].length; s++) {
        for (let k = 1; k <= patches; k++) {
          const fed = inputs.map((_, b) => toFloat64(paths.values[b][s]));
          const params = await patchParams(run, manifest, inputs, c.horizon, k, fed);
          params.forEach((p, b) => {
            const expected = paths.quantiles[b][s][k - 1];
            const steps = expected[0].length;
            reference.levels.forEach((q, l) => {
              const got = Array.from({ length: steps }, (_, t) => mixtureQuantile(stepOf(p, t), q, manifest.mixture.normal_scale));
              agreement.add(got, expected[l], `series ${b} path ${s} patch ${k} level ${q}`, floorOf(inputs[b].target));
            });
          });
        }
      }
      console.log(`moirai-moe ${c.name} roll-out given the paths: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  for (const c of reference.cases) {
    it(`${c.name}: agrees in distribution with the reference pipeline's ${reference.cases[0].sampled.num_samples} samples`, async () => {
      const inputs = c.series.map(inputOf);
      // Levels 0.06 apart around each reference level: the reference's sampled quantile lies between them.
      const BAND = 0.06;
      const around = reference.levels.flatMap((q) => [q - BAND, q + BAND]);
      const ours = await predictMoiraiMoE(run, manifest, inputs, c.horizon, around, { numSamples: 1000 });
      const first = await patchParams(run, manifest, inputs, c.horizon, 0);
      const misses: string[] = [];
      inputs.forEach((input, b) => {
        const slack = 1e-6 * floorOf(input.target);
        reference.levels.forEach((q, l) => {
          for (let t = 0; t < c.horizon; t++) {
            const v = c.sampled.quantiles[b][l][t]!;
            if (t < P) {
              // The first patch against the distribution itself: F(v-) <= q + band and F(v) >= q - band.
              const p = stepOf(first[b], t);
              const below = mixtureCdf(p, v - slack, manifest.mixture.normal_scale);
              const at = mixtureCdf(p, v + slack, manifest.mixture.normal_scale);
              if (below > q + BAND || at < q - BAND) misses.push(`series ${b} step ${t} level ${q}: F(${v}) in [${below}, ${at}]`);
            } else if (v < ours[b].quantiles[2 * l][t] - slack || v > ours[b].quantiles[2 * l + 1][t] + slack) {
              misses.push(`series ${b} step ${t} level ${q}: ${v} outside [${ours[b].quantiles[2 * l][t]}, ${ours[b].quantiles[2 * l + 1][t]}]`);
            }
          }
        });
      });
      console.log(`moirai-moe ${c.name} against the sampled pipeline: ${misses.length} of ${inputs.length * 9 * c.horizon} outside the band`);
      expect(misses.length, misses.slice(0, 3).join('; ')).toBeLessThanOrEqual(Math.ceil(0.01 * inputs.length * 9 * c.horizon));
    });
  }

  it('gives a series the same forecast alone as in a batch, roll-out included (paths seeded by the series)', async () => {
    const c = reference.cases.find((x) => x.name === 'long_horizon')!;
    const inputs = c.series.map(inputOf);
    const [alone] = await predictMoiraiMoE(run, manifest, [inputs[1]], c.horizon, [0.1, 0.5, 0.9]);
    const [, together] = await predictMoiraiMoE(run, manifest, inputs, c.horizon, [0.1, 0.5, 0.9]);
    const agreement = new Agreement();
    agreement.add(alone.mean, Array.from(together.mean), 'mean', floorOf(inputs[1].target));
    alone.quantiles.forEach((q, k) => agreement.add(q, Array.from(together.quantiles[k]), `level ${k}`, floorOf(inputs[1].target)));
    expect(agreement.worst, agreement.where).toBeLessThan(1e-5);
  });

  it('answers tasks with covariates from task fields, and refuses static variables and text values', async () => {
    const c = reference.cases.find((x) => x.name === 'covariates')!;
    const tasks: ForecastTask[] = c.series.map((s) => ({
      history: toFloat64(s.target),
      horizon: c.horizon,
      quantiles: [0.1, 0.5, 0.9],
      seasonLength: 1,
      covariates: {
        hist: Object.fromEntries(Object.entries(s.past!).map(([k, v]) => [k, Array.from(toFloat64(v))])),
        // The case's covariates run past its horizon (the splitter reads history + horizon of them).
        future: Object.fromEntries(Object.entries(s.future!).map(([k, v]) => [k, Array.from(toFloat64(v)).slice(0, s.target.length + c.horizon)])),
        static: {},
      },
    }));
    const out = await forecastMoiraiMoE(run, manifest, tasks);
    const agreement = new Agreement();
    out.forEach((o, i) => {
      agreement.add(o.mean, c.first_patch.mean[i], 'mean', level(tasks[i].history));
      [0, 4, 8].forEach((l, k) => agreement.add(o.quantiles[k], c.first_patch.quantiles[i][l], `level ${tasks[i].quantiles[k]}`, level(tasks[i].history)));
    });
    expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    const plain: ForecastTask = { history: Float64Array.of(1, 2, 3), horizon: 2, quantiles: [0.5], seasonLength: 1 };
    await expect(forecastMoiraiMoE(run, manifest, [{ ...plain, covariates: { hist: {}, future: {}, static: { size: 3 } } }])).rejects.toBeInstanceOf(
      ModelInputError,
    );
    const text = { hist: {}, future: { day: ['a', 'b', 'a', 'b', 'a'] }, static: {} };
    await expect(forecastMoiraiMoE(run, manifest, [{ ...plain, covariates: text }])).rejects.toBeInstanceOf(ModelInputError);
  });
});
