import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { featureTable } from '../../../models/families/foundation/tabicl-features.ts';
import { icdf, memberBorders, translate } from '../../../models/families/foundation/tabpfn-ts-bars.ts';
import { memberTable, regressorInput } from '../../../models/families/foundation/tabpfn-ts-preprocess.ts';
import { NumpyGenerator } from '../../../models/families/foundation/tabpfn-ts-random.ts';
import { fingerprint } from '../../../models/families/foundation/tabpfn-ts-transforms.ts';
import { forecastTabPFNTS, members, predictTabPFNTS, TABPFN_TS_TABLE } from '../../../models/families/foundation/tabpfn-ts.ts';
import type { ForecastTask } from '../../../models/contract/model-interface.ts';
import { Agreement, FIXTURES_DIR, level, readReference, toFloat64, useFixtureModel, type JsonSeries } from './reference.ts';

interface Reference {
  context_length: number;
  cases: {
    name: string;
    horizon: number;
    levels: number[];
    /** times: epoch milliseconds of the history then the horizon steps; future: numbers or strings. */
    series: { target: JsonSeries; times: number[]; future?: Record<string, (number | string | null)[]>; fingerprints: number[][] }[];
    /** median [series][step] (the pipeline's point forecast); quantiles [series][level][step]. */
    expected: { median: JsonSeries[]; quantiles: JsonSeries[][] };
  }[];
}

/** The pipeline's intermediate values for the first series of three cases (tools/export/tabpfn_ts.py `stages`). */
interface Stage {
  train_X: (number | string | null)[][];
  test_X: (number | string | null)[][];
  y_mean: number;
  y_std: number;
  members: { X_train: JsonSeries[]; X_test: JsonSeries[]; y_train: JsonSeries; logits: JsonSeries[]; borders: JsonSeries }[];
}

const reference = readReference<Reference>('tabpfn-ts');
const stages = JSON.parse(fs.readFileSync(path.join(FIXTURES_DIR, 'tabpfn-ts', 'stages.json'), 'utf8')) as Record<string, Stage>;
const { manifest, run } = useFixtureModel('tabpfn-ts');
const TOLERANCE = 1e-4;
/**
 * The bound for forecasts with the adapter's own fingerprint columns. The column is SHA-256 of each
 * member row rounded to 12 decimals: a last-bit difference in any value (numpy's AVX-512 log1p,
 * expm1, log and sin against JavaScript's, Jacobi against ARPACK for the SVD features) gives that
 * row another pseudo-random value. The reference moves as much itself: recomputed on this machine
 * with numpy's AVX-512 kernels disabled (NPY_DISABLE_CPU_FEATURES), it differs from its own
 * recorded forecasts by up to 2.3e-3 on these cases.
 */
const FINGERPRINT_TOLERANCE = 5e-3;
/**
 * Cases that miss 1e-4 even with the reference's fingerprints, and why (measured: 7.2e-4 and
 * 9.0e-4). Both hold calendar columns of two or three distinct values over the history (a day of
 * week's cosine over one day; a week's sine across a week boundary), where the Yeo-Johnson
 * likelihood is flat or unbounded towards the edge of scipy's bracket: the lambda the search stops
 * at moves with the last bits of each evaluation (numpy's vectorised log1p, expm1 and log against
 * JavaScript's), and the standardised column with it. The batch also breaks a tie between
 * quantile knots (two sines of mirrored angles, equal in numpy and a last bit apart in
 * JavaScript), which moves the SVD features.
 */
const ILL_CONDITIONED: Record<string, number> = { missing_values: 2e-3, batch_of_20: 2e-3 };

type Case = Reference['cases'][number];

const taskOf = (c: Case, s: Case['series'][number]): ForecastTask => ({
  history: toFloat64(s.target),
  horizon: c.horizon,
  quantiles: c.levels,
  seasonLength: 1,
  times: Float64Array.from(s.times),
  ...(s.future && { covariates: { hist: {}, static: {}, future: s.future as Record<string, (number | string)[]> } }),
});

describe('tabpfn-ts adapter against TabPFNTSPipeline.predict_df (tabpfn-time-series 1.0.10, tabpfn 6.4.1; tiny v2 fixture, fixed random weights)', () => {
  it('has a fixture that covers missing values, short histories, long horizons, numeric and string covariates, tail levels and a batch', () => {
    const names = reference.cases.map((c) => c.name);
    for (const name of [
      'missing_values',
      'short_histories',
      'long_horizon',
      'longer_than_context',
      'covariates',
      'string_covariates',
      'tail_levels',
      'batch_of_20',
    ])
      expect(names).toContain(name);
    expect(reference.context_length).toBe(manifest.context_length);
  });

  for (const c of reference.cases) {
    const tolerance = ILL_CONDITIONED[c.name] ?? TOLERANCE;
    it(`${c.name}: the median and the quantiles within ${tolerance} relative error, given the reference's fingerprint columns`, async () => {
      const agreement = new Agreement();
      const own = new Agreement();
      for (const [i, s] of c.series.entries()) {
        const task = taskOf(c, s);
        const floor = level(task.history);
        const got = await predictTabPFNTS(
          run,
          manifest,
          task,
          s.fingerprints.map((f) => Float64Array.from(f)),
        );
        agreement.add(got.mean, c.expected.median[i], `series ${i} median`, floor);
        got.quantiles.forEach((values, k) => agreement.add(values, c.expected.quantiles[i][k], `series ${i} level ${c.levels[k]}`, floor));
        const alone = await predictTabPFNTS(run, manifest, task);
        own.add(alone.mean, c.expected.median[i], `series ${i} median`, floor);
        alone.quantiles.forEach((values, k) => own.add(values, c.expected.quantiles[i][k], `series ${i} level ${c.levels[k]}`, floor));
      }
      console.log(
        `tabpfn-ts ${c.name}: ${agreement.count} values, max relative error ${agreement.worst.toExponential(2)} (the reference's fingerprints), ${own.worst.toExponential(2)} (the adapter's own)`,
      );
      expect(agreement.worst, agreement.where).toBeLessThan(tolerance);
      expect(own.worst, own.where).toBeLessThan(FINGERPRINT_TOLERANCE);
    });
  }

  it("hashes rows as AddFingerprintFeaturesStep does (salted by the table's cells, duplicates counted up)", () => {
    // tabpfn 6.4.1: AddFingerprintFeaturesStep().fit_transform on these 5 rows, then transform(is_test=True).
    const train = [
      [1.5, 2.25],
      [0.1, -3.0],
      [1.5, 2.25],
      [1.5, 2.25],
      [NaN, 1.0],
    ];
    const rows = [...train, [1.5, 2.25], [7.0, 8.0]];
    const columns = [0, 1].map((c) => Float64Array.from(rows, (r) => r[c]));
    expect(Array.from(fingerprint(columns, train.length))).toEqual([
      0.8965630206636757, 0.09556575840256387, 0.49429311162313044, 0.5116969964531873, 0.8037810306738113, 0.8965630206636757, 0.05942709686539313,
    ]);
  });

  it('forecasts a batch of tasks of mixed horizons in input order', async () => {
    const cases = ['basic', 'long_horizon', 'daily'].map((name) => reference.cases.find((x) => x.name === name)!);
    const tasks = cases.flatMap((c) => c.series.map((s) => taskOf(c, s)));
    const out = await forecastTabPFNTS(run, manifest, tasks);
    const alone = await Promise.all(tasks.map((t) => predictTabPFNTS(run, manifest, t)));
    out.forEach((f, i) => expect(Array.from(f.mean)).toEqual(Array.from(alone[i].mean)));
    const expected = cases.flatMap((c) => c.expected.median);
    const agreement = new Agreement();
    out.forEach((f, i) => agreement.add(f.mean, expected[i], `task ${i} median`, level(tasks[i].history)));
    expect(agreement.worst, agreement.where).toBeLessThan(FINGERPRINT_TOLERANCE);
  });

  for (const name of Object.keys(stages)) {
    it(`${name}: the feature table, each member's table width and targets, as the pipeline builds them`, () => {
      const c = reference.cases.find((x) => x.name === name)!;
      const st = stages[name];
      const table = featureTable(taskOf(c, c.series[0]), manifest.context_length, manifest.periodic, TABPFN_TS_TABLE);
      const expected = [...st.train_X, ...st.test_X];
      expect([table.rows, table.columns]).toEqual([expected.length, expected[0].length]);
      expected.forEach((row, r) =>
        row.forEach((v, k) => {
          if (typeof v === 'string') expect(table.text.get(k)![r]).toBe(v);
          else expect(Math.abs(table.features[r * table.columns + k] - (v ?? NaN))).toBeLessThan(1e-12);
        }),
      );
      const input = regressorInput(table, 'tabpfn-ts');
      expect(input.yMean).toBeCloseTo(st.y_mean, 9);
      members(manifest).forEach((m, k) => {
        const t = memberTable(input, m, 'tabpfn-ts');
        expect(t.width).toBe(st.members[k].X_train[0].length);
        st.members[k].y_train.forEach((v, i) => expect(Math.abs(t.targets[i] - v!)).toBeLessThan(1e-5));
      });
    });

    it(`${name}: given the members' own tables, the graph and the bar-distribution post-processing give the reference's numbers`, async () => {
      const c = reference.cases.find((x) => x.name === name)!;
      const st = stages[name];
      const standard = manifest.borders.map(Math.fround);
      const test = c.horizon;
      const average = Array.from({ length: test }, () => new Float64Array(standard.length - 1));
      const input = regressorInput(featureTable(taskOf(c, c.series[0]), manifest.context_length, manifest.periodic, TABPFN_TS_TABLE), 'tabpfn-ts');
      let logitError = 0;
      for (const [k, m] of st.members.entries()) {
        const rows = [...m.X_train, ...m.X_test];
        const width = rows[0].length;
        const features = Float32Array.from(rows.flat(), (v) => v ?? NaN);
        const { float32, output } = await import('../../../models/families/foundation/onnx-session.ts');
        const out = await run({
          features: float32(features, [1, rows.length, width]),
          train_targets: float32(
            Float32Array.from(m.y_train, (v) => v!),
            [1, m.y_train.length],
          ),
        });
        const logits = output(out, 'logits', [1, test, standard.length - 1]);
        m.logits.forEach((row, j) => row.forEach((v, b) => (logitError = Math.max(logitError, Math.abs(logits[j * row.length + b] - v!)))));
        const config = members(manifest)[k];
        const transform = config.target === 'safepower' ? memberTable(input, config, 'tabpfn-ts').targetTransform : null;
        const { borders, cancel } = transform ? memberBorders(standard, transform) : { borders: standard, cancel: null };
        borders.forEach((b, i) => expect(Math.abs(b - m.borders[i]!)).toBeLessThan(1e-4 * Math.max(1, Math.abs(b))));
        for (let j = 0; j < test; j++) {
          const row = Array.from(logits.subarray(j * (standard.length - 1), (j + 1) * (standard.length - 1)), (v, b) =>
            cancel?.[b] ? -Infinity : Math.fround(v / manifest.regressor.softmax_temperature),
          );
          translate(row, borders, standard).forEach((p, b) => (average[j][b] += p / st.members.length));
        }
      }
      expect(logitError).toBeLessThan(1e-4);
      const raw = standard.map((b) => Math.fround(b * st.y_std + st.y_mean));
      const agreement = new Agreement();
      const floor = level(toFloat64(c.series[0].target));
      agreement.add(
        average.map((p) => icdf(p, raw, 0.5)),
        c.expected.median[0],
        'median',
        floor,
      );
      c.levels.forEach((q, i) =>
        agreement.add(
          average.map((p) => icdf(p, raw, q)),
          c.expected.quantiles[0][i],
          `level ${q}`,
          floor,
        ),
      );
      console.log(`tabpfn-ts ${name} from the members' own tables: max relative error ${agreement.worst.toExponential(2)}`);
      expect(agreement.worst, agreement.where).toBeLessThan(TOLERANCE);
    });
  }

  it("draws numpy's default_rng permutations (the members' feature and category shuffles)", () => {
    // numpy 2.4: np.random.default_rng(s).permutation(10) for s in 0, 1167425778, 12345678901.
    expect(new NumpyGenerator(0).permutation(10)).toEqual([4, 6, 2, 7, 3, 5, 9, 0, 8, 1]);
    expect(new NumpyGenerator(1167425778).permutation(10)).toEqual([8, 5, 7, 2, 4, 9, 0, 6, 1, 3]);
    expect(new NumpyGenerator(12345678901).permutation(10)).toEqual([5, 8, 3, 1, 4, 7, 0, 9, 6, 2]);
    expect(new NumpyGenerator(5880883).permutation(37).slice(0, 8)).toEqual([6, 18, 15, 4, 3, 25, 35, 2]);
  });
});
