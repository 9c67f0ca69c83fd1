/**
 * TabPFN-TS (PyPI `tabpfn-time-series` 1.0.10 over `tabpfn` 6.4.1) on ONNX Runtime: the
 * reference's `TabPFNTSPipeline` with its defaults over `TabPFNRegressor` with a v2 checkpoint,
 * around an exported pass of the network (tools/export/tabpfn_ts.py) that maps the members'
 * prepared tables to the logits of their test rows. Each series is a table of its own, its
 * horizon one pass. What runs in the graph and what in TypeScript, and why:
 * docs/foundation-models.md, "`tabpfn-ts`" ("What runs where") and "TabPFN-TS".
 */
import type { ForecastOutput, ForecastTask, GlobalModel, ModelSettings } from '../../contract/model-interface.ts';
import { featureTable, type TableOptions } from './tabicl-features.ts';
import { memberBorders, icdf, translate } from './tabpfn-ts-bars.ts';
import { memberTable, regressorInput, type MemberConfig, type MemberTable } from './tabpfn-ts-preprocess.ts';
import { float32, onnxModel, output, type Runner } from './onnx-session.ts';
import type { TabPFNTSManifest } from './model-store.ts';

const f32 = Math.fround;

/** TabPFN-TS's CalendarFeature: sin/cos over period - 1 of 60, 60, 24, 7, 30.5, 365, 52 and 12; its context frame keeps every covariate. */
export const TABPFN_TS_TABLE: TableOptions = { model: 'tabpfn-ts', calendarPeriods: [59, 59, 23, 6, 29.5, 364, 51, 11], allCovariates: true };

/** The manifest's ensemble as member configurations, in the regressor's order. */
export function members(m: TabPFNTSManifest): MemberConfig[] {
  const r = m.regressor;
  return r.member_seeds.map((seed, i) => ({ seed, preprocessing: r.preprocessing[i], target: r.target_transforms[i] }));
}

/** Runs the members' tables through the network, members of one width per call: logits [member] -> [test][buckets]. */
async function memberLogits(run: Runner, tables: readonly MemberTable[], rows: number, train: number, buckets: number): Promise<Float32Array[]> {
  const out: Float32Array[] = new Array(tables.length);
  const widths = [...new Set(tables.map((t) => t.width))];
  for (const width of widths) {
    const ids = tables.flatMap((t, i) => (t.width === width ? [i] : []));
    const features = new Float32Array(ids.length * rows * width);
    const targets = new Float32Array(ids.length * train);
    ids.forEach((id, b) => {
      features.set(tables[id].features, b * rows * width);
      targets.set(tables[id].targets, b * train);
    });
    const result = await run({ features: float32(features, [ids.length, rows, width]), train_targets: float32(targets, [ids.length, train]) });
    const logits = output(result, 'logits', [ids.length, rows - train, buckets]);
    ids.forEach((id, b) => (out[id] = logits.slice(b * (rows - train) * buckets, (b + 1) * (rows - train) * buckets)));
  }
  return out;
}

/**
 * The reference's forecast of one task: the median (the point) and [level][step] at the task's
 * levels. `fingerprints` (tests only) replaces each member's fingerprint column (tabpfn-ts-preprocess.ts).
 */
export async function predictTabPFNTS(run: Runner, m: TabPFNTSManifest, task: ForecastTask, fingerprints?: readonly Float64Array[]): Promise<ForecastOutput> {
  const table = featureTable(task, m.context_length, m.periodic, TABPFN_TS_TABLE);
  const input = regressorInput(table, 'tabpfn-ts');
  const { train, rows } = input;
  const test = rows - train;
  if (input.constant !== null) {
    // A constant history: the regressor answers its value for every output (_handle_constant_target).
    const value = input.constant;
    return { mean: new Float64Array(test).fill(value), quantiles: task.quantiles.map(() => new Float64Array(test).fill(value)) };
  }
  const configs = members(m);
  const tables = configs.map((c, k) => memberTable(input, c, 'tabpfn-ts', fingerprints?.[k]));
  const standard = m.borders.map(f32);
  const buckets = standard.length - 1;
  const logits = await memberLogits(run, tables, rows, train, buckets);
  const T = m.regressor.softmax_temperature;
  const average = Array.from({ length: test }, () => new Float64Array(buckets));
  tables.forEach((t, k) => {
    const { borders, cancel } = t.targetTransform ? memberBorders(standard, t.targetTransform) : { borders: standard, cancel: null };
    for (let j = 0; j < test; j++) {
      const row = Float64Array.from(logits[k].subarray(j * buckets, (j + 1) * buckets), (v, b) => (cancel?.[b] ? -Infinity : f32(v / T)));
      const probs = translate(row, borders, standard);
      for (let b = 0; b < buckets; b++) average[j][b] += probs[b];
    }
  });
  // Scaled back to the data (the raw-space bar distribution's borders, float32).
  const raw = standard.map((b) => f32(b * input.yStd + input.yMean));
  const mean = new Float64Array(test);
  const quantiles = task.quantiles.map(() => new Float64Array(test));
  for (let j = 0; j < test; j++) {
    const p = average[j].map((v) => f32(v / tables.length));
    mean[j] = icdf(p, raw, 0.5);
    task.quantiles.forEach((q, i) => (quantiles[i][j] = icdf(p, raw, q)));
  }
  return { mean, quantiles };
}

/** Forecasts tasks in input order, one table per task. */
export async function forecastTabPFNTS(run: Runner, m: TabPFNTSManifest, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = [];
  for (const task of tasks) out.push(await predictTabPFNTS(run, m, task));
  return out;
}

/** The service's tabpfn-ts (MODELS_DIR/tabpfn-ts). */
export const tabpfnTsModel = (settings: ModelSettings): GlobalModel =>
  onnxModel('tabpfn-ts', settings, (run, manifest, tasks) => forecastTabPFNTS(run, manifest, tasks));
