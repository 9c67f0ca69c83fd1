/**
 * `TabICLRegressor`'s preparation of a table (tabicl 2.2.0, `fit` and `predict` with
 * `EnsembleGenerator`), for the network (tools/export/tabicl_forecast.py): the target standardised,
 * missing features imputed, constant columns dropped, then per normalisation (none, or Yeo-Johnson
 * "power") the clipped standard scaling and outlier removal, and per member its column order.
 * Step by step: docs/foundation-models.md, "`tabicl`" ("Regressor preparation").
 */
import type { FeatureTable } from './tabicl-features.ts';
import { ensembleMembers, yeoJohnson, yeoJohnsonLambda } from './tabicl-ensemble.ts';

const f32 = Math.fround;

export interface RegressorConfig {
  readonly n_estimators: number;
  readonly norm_methods: readonly ('none' | 'power')[];
  readonly feat_shuffle_method: 'latin' | 'none';
  readonly outlier_threshold: number;
  readonly random_state: number;
}

/** The members' tables: one batch per normalisation, rows then columns in each member's order. */
export interface PreparedTable {
  readonly batches: { readonly features: Float32Array; readonly members: number }[];
  readonly rows: number;
  readonly columns: number;
  readonly trainTargets: Float32Array;
  readonly targetMean: number;
  readonly targetScale: number;
}

const sum = (values: readonly number[]): number => values.reduce((s, v) => s + v, 0);

/** Mean and population variance. */
function moments(values: readonly number[]): { mean: number; variance: number } {
  const mean = sum(values) / values.length;
  return { mean, variance: sum(values.map((v) => (v - mean) ** 2)) / values.length };
}

/** sklearn's `_is_constant_feature`: a variance within the rounding of the mean. */
export function isConstant(variance: number, mean: number, n: number): boolean {
  const eps = Number.EPSILON;
  return variance <= n * eps * variance + (n * mean * eps) ** 2;
}

/** `StandardScaler` fitted on `train`, applied to `values`: a constant column keeps scale 1. */
function standardScaled(values: number[], train: number): number[] {
  const { mean, variance } = moments(values.slice(0, train));
  const scale = isConstant(variance, mean, train) ? 1 : Math.sqrt(variance);
  return values.map((v) => (v - mean) / scale);
}

/** Mean and deviation (ddof 1 past one row) of the non-NaN values (np.nanmean, np.nanstd), at least 1e-6. */
function nanStats(values: readonly number[], rows: number): { mean: number; std: number } {
  const known = values.filter((v) => !Number.isNaN(v));
  const mean = sum(known) / known.length;
  const variance = sum(known.map((v) => (v - mean) ** 2)) / (known.length - (rows > 1 ? 1 : 0));
  return { mean, std: Math.max(Math.sqrt(variance), 1e-6) };
}

/** `PreprocessingPipeline` of one normalisation on one column (training rows first). */
function normalised(values: number[], train: number, norm: 'none' | 'power', threshold: number): number[] {
  const { mean, variance } = moments(values.slice(0, train));
  const scale = Math.sqrt(variance) + 1e-6;
  let x = values.map((v) => Math.min(Math.max((v - mean) / scale, -100), 100));
  if (norm === 'power') {
    const fitted = x.slice(0, train);
    const m = moments(fitted);
    // PowerTransformer leaves a constant column as it is (lambda 1), then standardises.
    const lambda = isConstant(m.variance, m.mean, train) ? 1 : yeoJohnsonLambda(fitted);
    x = standardScaled(
      x.map((v) => yeoJohnson(v, lambda)),
      train,
    );
  }
  const first = nanStats(x.slice(0, train), train);
  const inside = x.slice(0, train).map((v) => (v < first.mean - threshold * first.std || v > first.mean + threshold * first.std ? NaN : v));
  const second = nanStats(inside, train);
  const lower = second.mean - threshold * second.std;
  const upper = second.mean + threshold * second.std;
  return x.map((v) => {
    const low = Math.max(-Math.log1p(Math.abs(v)) + lower, v);
    return Math.min(Math.log1p(Math.abs(low)) + upper, low);
  });
}

export function prepareTable(table: FeatureTable, config: RegressorConfig): PreparedTable {
  const { targets, features, rows, columns } = table;
  const train = targets.length;
  const y32 = Array.from(targets, f32); // fit casts y to float32
  const y = moments(y32);
  const targetScale = isConstant(y.variance, y.mean, train) ? 1 : Math.sqrt(y.variance);
  const trainTargets = Float32Array.from(y32, (v) => (v - y.mean) / targetScale);

  const imputed = (c: number): number[] => {
    const values = Array.from({ length: rows }, (_, r) => features[r * columns + c]);
    const known = values.slice(0, train).filter((v) => !Number.isNaN(v));
    const fill = known.length ? sum(known) / known.length : 0;
    return values.map((v) => (Number.isNaN(v) ? fill : v));
  };
  let kept: number[][] = [];
  for (let c = 0; c < columns; c++) {
    const values = imputed(c);
    if (train <= 1 || new Set(values.slice(0, train)).size > 1) kept.push(values);
  }
  if (kept.length === 0) kept = [imputed(0)];

  const width = kept.length;
  const members = ensembleMembers(width, config);
  const norms = [...new Set(members.map((m) => m.norm))];
  const batches = norms.map((norm) => {
    const table = kept.map((values) => normalised(values, train, norm, config.outlier_threshold));
    const own = members.filter((m) => m.norm === norm);
    const out = new Float32Array(own.length * rows * width);
    own.forEach(({ order }, b) => {
      for (let r = 0; r < rows; r++) for (let c = 0; c < width; c++) out[(b * rows + r) * width + c] = table[order[c]][r];
    });
    return { features: out, members: own.length };
  });
  return { batches, rows, columns: width, trainTargets, targetMean: y.mean, targetScale };
}
