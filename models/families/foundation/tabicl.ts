/**
 * TabICL (PyPI `tabicl` 2.2.0) on ONNX Runtime: the reference's `TabICLForecaster` with its
 * defaults over `TabICLRegressor` with the manifest's ensemble (the package's defaults), around an
 * exported pass of the network (tools/export/tabicl_forecast.py) that maps prepared tables to the
 * raw quantiles of their test rows. Each series is a table of its own (tabicl-features.ts), its
 * horizon one pass; requested levels are read off each member's quantiles, then averaged. Step by
 * step: docs/foundation-models.md, "`tabicl`" and "TabICL".
 */
import type { ForecastOutput, ForecastTask, GlobalModel, ModelSettings } from '../../contract/model-interface.ts';
import { featureTable } from './tabicl-features.ts';
import { prepareTable } from './tabicl-preprocess.ts';
import { float32, onnxModel, output, type Runner } from './onnx-session.ts';
import type { TabICLManifest } from './model-store.ts';

const f32 = Math.fround;

/** `QuantileDistributionConfig` (tabicl 2.2.0). */
const TOL = 1e-6;
const MIN_BETA = 0.01;
const MAX_BETA = 100;
const TAIL_QUANTILES = 20;
/**
 * Ensemble members per network call, from the table's size: the exported in-context attention
 * materialises rows x training-rows scores per head and member, so long tables go one member at a
 * time and short ones share a call. The forecasts do not depend on it: each member is computed alone.
 */
const ATTENTION_CELLS_PER_CALL = 2 ** 24;

/**
 * `QuantileDistribution` of one test row's raw quantiles, sorted first (`fix_crossing` with its
 * default method "sort"): the mean and the quantiles at `levels`, in the standardised space.
 */
export function distribution(raw: Float32Array, levels: readonly number[]): { mean: number; quantiles: number[] } {
  const q = Float32Array.from(raw).sort();
  const Q = q.length;
  const alpha = Float32Array.from({ length: Q }, (_, i) => (i + 1) / (Q + 1)); // linspace(0, 1, Q + 2)[1:-1]
  let mean = 0;
  for (const v of q) mean += v;
  mean /= Q;
  // estimate_exp_tail_params: slopes of the outer quantiles against log(alpha), log(1 - alpha).
  const k = Math.min(TAIL_QUANTILES, Math.floor(Q / 4));
  const slope = (xs: number[], ys: number[]): number => {
    const mx = xs.reduce((s, v) => s + v, 0) / xs.length;
    const my = ys.reduce((s, v) => s + v, 0) / ys.length;
    let cov = 0;
    let variance = 0;
    xs.forEach((x, i) => {
      cov += (ys[i] - my) * (x - mx);
      variance += (x - mx) ** 2;
    });
    return cov / xs.length / Math.max(variance / xs.length, TOL);
  };
  const clampBeta = (b: number): number => Math.min(Math.max(Math.abs(b), MIN_BETA), MAX_BETA);
  const left = Array.from({ length: k }, (_, i) => i);
  const right = Array.from({ length: k }, (_, i) => Q - k + i);
  const betaLeft = clampBeta(
    slope(
      left.map((i) => Math.log(Math.max(alpha[i], TOL))),
      left.map((i) => q[i]),
    ),
  );
  const betaRight = clampBeta(
    -slope(
      right.map((i) => Math.log(Math.max(1 - alpha[i], TOL))),
      right.map((i) => q[i]),
    ),
  );
  const alphaL = alpha[0];
  const alphaR = alpha[Q - 1];
  const bLeft = q[0] - betaLeft * Math.log(Math.max(alphaL, TOL));
  const bRight = q[Q - 1] + betaRight * Math.log(1 - Math.min(alphaR, 1 - TOL));

  const quantiles = levels.map((level) => {
    const a = f32(level);
    if (a < alphaL) return betaLeft * Math.log(Math.max(a, TOL)) + bLeft;
    if (a > alphaR) return -betaRight * Math.log(Math.max(1 - a, TOL)) + bRight;
    if (a >= alphaR) return q[Q - 1];
    // searchsorted(alpha[:-1], a, right=True) - 1, clamped to a segment.
    let lo = 0;
    let hi = Q - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (alpha[mid] <= a) lo = mid + 1;
      else hi = mid;
    }
    const s = Math.min(Math.max(lo - 1, 0), Q - 2);
    const t = (a - alpha[s]) / Math.max(alpha[s + 1] - alpha[s], TOL);
    return q[s] + Math.min(Math.max(t, 0), 1) * (q[s + 1] - q[s]);
  });
  return { mean, quantiles };
}

/** The reference's forecast of one task: the mean and [level][step] at the task's levels. */
export async function predictTabICL(run: Runner, m: TabICLManifest, task: ForecastTask, cellsPerCall = ATTENTION_CELLS_PER_CALL): Promise<ForecastOutput> {
  const table = prepareTable(featureTable(task, m.context_length, m.periodic), m.regressor);
  const { rows, columns, trainTargets } = table;
  const train = trainTargets.length;
  const test = rows - train;
  const Q = m.num_quantiles;
  const mean = new Float64Array(test);
  const quantiles = task.quantiles.map(() => new Float64Array(test));
  const back = (v: number): number => v * table.targetScale + table.targetMean;
  let count = 0;
  // Members per call: the in-context attention holds rows x train scores per head and member.
  const perCall = Math.max(1, Math.floor(cellsPerCall / (rows * train)));
  for (const batch of table.batches) {
    for (let first = 0; first < batch.members; first += perCall) {
      const members = Math.min(perCall, batch.members - first);
      const features = batch.features.subarray(first * rows * columns, (first + members) * rows * columns);
      const targets = new Float32Array(members * train);
      for (let b = 0; b < members; b++) targets.set(trainTargets, b * train);
      const out = await run({ features: float32(features, [members, rows, columns]), train_targets: float32(targets, [members, train]) });
      const raw = output(out, 'raw_quantiles', [members, test, Q]);
      for (let b = 0; b < members; b++) {
        for (let j = 0; j < test; j++) {
          const from = (b * test + j) * Q;
          const d = distribution(raw.subarray(from, from + Q), task.quantiles);
          mean[j] += back(d.mean);
          d.quantiles.forEach((v, k) => (quantiles[k][j] += back(v)));
        }
      }
      count += members;
    }
  }
  for (let j = 0; j < test; j++) {
    mean[j] /= count;
    for (const q of quantiles) q[j] /= count;
  }
  return { mean, quantiles };
}

/** Forecasts tasks in input order, one table (one network call) per task. */
export async function forecastTabICL(run: Runner, m: TabICLManifest, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = [];
  for (const task of tasks) out.push(await predictTabICL(run, m, task));
  return out;
}

/** The service's tabicl (MODELS_DIR/tabicl). */
export const tabiclModel = (settings: ModelSettings): GlobalModel =>
  onnxModel('tabicl', settings, (run, manifest, tasks) => forecastTabICL(run, manifest, tasks));
