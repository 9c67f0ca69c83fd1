/**
 * The column transforms of TabPFNRegressor's ensemble members (tabpfn 6.4.1, v2 inference
 * configuration), each fitted on the training rows and applied to every row, in float64 as the
 * package computes them on the CPU: the uniform quantile transform, the "safe" Yeo-Johnson and
 * standard scaling, the SVD features (by Jacobi rotations, not ARPACK) and the fingerprint column.
 * tabpfn-ts-preprocess.ts chains them.
 */
import { createHash } from 'node:crypto';
import { symmetricEigenvectors } from '../../numerics/linalg.ts';
import { yeoJohnson, yeoJohnsonLambda } from './tabicl-ensemble.ts';
import { isConstant } from './tabicl-preprocess.ts';

/** A column: training rows first, then the test rows. */
export type Column = Float64Array;

const EPS = Number.EPSILON;

function meanVar(values: ArrayLike<number>, n: number): { mean: number; variance: number } {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i];
  const mean = sum / n;
  let sq = 0;
  let correction = 0;
  for (let i = 0; i < n; i++) {
    const d = values[i] - mean;
    correction += d;
    sq += d * d;
  }
  return { mean, variance: (sq - (correction * correction) / n) / n };
}

/** The mean of the finite values among the first `n` (0 where there is none): what `_make_finite_steps` fills with. */
function finiteMean(x: ArrayLike<number>, n: number): number {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < n; i++) if (Number.isFinite(x[i])) ((sum += x[i]), count++);
  return count ? sum / count : 0;
}

/** Non-finite values to the mean of the finite training values: `_make_finite_steps`. */
function imputeNonFinite(x: Column, train: number): Column {
  const fill = finiteMean(x, train);
  return x.map((v) => (Number.isFinite(v) ? v : fill));
}

/** `make_scaler_safe("standard", StandardScaler(with_mean))`: finite, scaled, finite again. */
export function safeStandardScaled(x: Column, train: number, withMean = true): Column {
  const finite = imputeNonFinite(x, train);
  const { mean, variance } = meanVar(finite, train);
  // StandardScaler: scale 1 for a constant column (_handle_zeros_in_scale with the constant mask only).
  const scale = isConstant(variance, mean, train) ? 1 : Math.sqrt(variance);
  const shift = withMean ? mean : 0;
  return imputeNonFinite(
    finite.map((v) => (v - shift) / scale),
    train,
  );
}

/** numpy's `_lerp` (the linear percentile between two order statistics). */
function lerp(a: number, b: number, t: number): number {
  const d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

/** `np.interp(x, xp, fp)` for increasing xp (ties: the last equal knot). */
function interp(x: number, xp: readonly number[], fp: readonly number[]): number {
  const n = xp.length;
  if (x < xp[0]) return fp[0];
  if (x > xp[n - 1]) return fp[n - 1];
  if (x === xp[n - 1]) return fp[n - 1];
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (xp[mid] <= x) lo = mid;
    else hi = mid;
  }
  const slope = (fp[lo + 1] - fp[lo]) / (xp[lo + 1] - xp[lo]);
  return slope * (x - xp[lo]) + fp[lo];
}

/**
 * `AdaptiveQuantileTransformer(output_distribution="uniform", n_quantiles=max(n // 5, 2))`
 * (the `quantile_uni` preset) fitted on the training rows of one column.
 */
export function quantileUniform(x: Column, train: number): Column {
  const sorted = Array.from(x.subarray(0, train))
    .filter((v) => !Number.isNaN(v))
    .sort((a, b) => a - b);
  const nq = Math.max(1, Math.min(Math.max(Math.floor(train / 5), 2), train, 20_000));
  const references = Array.from({ length: nq }, (_, i) => (nq === 1 ? 0 : i === nq - 1 ? 1 : i * (1 / (nq - 1))));
  const m = sorted.length;
  // np.nanpercentile(column, references * 100), method "linear".
  const quantiles = references.map((r) => {
    if (m === 0) return NaN;
    const at = ((r * 100) / 100) * (m - 1);
    const below = Math.min(Math.floor(at), m - 1);
    const above = Math.min(below + 1, m - 1);
    return lerp(sorted[below], sorted[above], at - below);
  });
  const negQ = quantiles.map((q) => -q).reverse();
  const negR = references.map((r) => -r).reverse();
  const low = quantiles[0];
  const high = quantiles[nq - 1];
  return x.map((v) => {
    if (Number.isNaN(v)) return v;
    if (v === high) return 1;
    if (v === low) return 0;
    return 0.5 * (interp(v, quantiles, references) - interp(-v, negQ, negR));
  });
}

/** A fitted "safepower" pipeline (SafePowerTransformer without standardising, then the safe standard scaler). */
export interface PowerScaler {
  readonly lambda: number;
  readonly fill: number;
  readonly mean: number;
  readonly scale: number;
  readonly fill2: number;
}

/** Fits the "safepower" pipeline on the training rows of a column. */
export function fitSafePower(x: Column, train: number): PowerScaler {
  const fitted = x.subarray(0, train);
  const raw = meanVar(fitted, train);
  const finiteRows = Array.from(fitted).filter((v) => !Number.isNaN(v));
  // PowerTransformer: a constant column keeps lambda 1 (NaN moments are never constant).
  const lambda = !Number.isNaN(raw.variance) && isConstant(raw.variance, raw.mean, train) ? 1 : finiteRows.length ? yeoJohnsonLambda(finiteRows) : 1;
  const transformed = Array.from(fitted, (v) => yeoJohnson(v, lambda));
  const fill = finiteMean(transformed, train);
  const finite = transformed.map((v) => (Number.isFinite(v) ? v : fill));
  const { mean, variance } = meanVar(finite, train);
  const scale = isConstant(variance, mean, train) ? 1 : Math.sqrt(variance);
  const scaled = finite.map((v) => (v - mean) / scale);
  return { lambda, fill, mean, scale, fill2: finiteMean(scaled, train) };
}

export function applySafePower(p: PowerScaler, x: ArrayLike<number>): Float64Array {
  return Float64Array.from(x, (v) => {
    let t = yeoJohnson(v, p.lambda);
    if (!Number.isFinite(t)) t = p.fill;
    const s = (t - p.mean) / p.scale;
    return Number.isFinite(s) ? s : p.fill2;
  });
}

/** The pipeline's `inverse_transform` (the imputers pass values through): scaler, then Yeo-Johnson's inverse. */
export function invertSafePower(p: PowerScaler, v: number): number {
  const x = v * p.scale + p.mean;
  const l = p.lambda;
  if (x >= 0) return Math.abs(l) < EPS ? Math.expm1(x) : Math.expm1(Math.log(x * l + 1) / l);
  return Math.abs(l - 2) > EPS ? -Math.expm1(Math.log(-(2 - l) * x + 1) / (2 - l)) : -Math.expm1(-x);
}

/**
 * `AddSVDFeaturesStep("svd")`: the safe standard scaler without centring, then the projections on
 * the `max(1, min(train // 10 + 1, columns // 2))` leading right singular vectors of the training
 * rows (none for fewer than 2 columns).
 */
export function svdFeatures(columns: readonly Column[], train: number): Column[] {
  const width = columns.length;
  if (width < 2) return [];
  const k = Math.max(1, Math.min(Math.floor(train / 10) + 1, Math.floor(width / 2)));
  const scaled = columns.map((c) => safeStandardScaled(c, train, false));
  const gram = new Float64Array(width * width);
  for (let i = 0; i < width; i++)
    for (let j = i; j < width; j++) {
      let s = 0;
      for (let r = 0; r < train; r++) s += scaled[i][r] * scaled[j][r];
      gram[i * width + j] = s;
      gram[j * width + i] = s;
    }
  // Its eigenvectors by decreasing eigenvalue (cyclic Jacobi) are the right singular vectors.
  const vectors = symmetricEigenvectors(gram, width);
  const rows = columns[0].length;
  return Array.from({ length: k }, (_, e) => {
    const v = Float64Array.from({ length: width }, (_, i) => vectors[i * width + e]);
    // svd_flip(u_based_decision=False): the largest-magnitude entry of each vector positive.
    let at = 0;
    for (let i = 1; i < width; i++) if (Math.abs(v[i]) > Math.abs(v[at])) at = i;
    const sign = Math.sign(v[at]) || 1;
    const out = new Float64Array(rows);
    for (let r = 0; r < rows; r++) {
      let s = 0;
      for (let i = 0; i < width; i++) s += scaled[i][r] * v[i] * sign;
      out[r] = s;
    }
    return out;
  });
}

/** numpy's `np.around(x, 12)`: scaled, rounded half to even, scaled back. */
function around12(x: number): number {
  if (!Number.isFinite(x)) return x;
  const y = x * 1e12;
  let r = Math.round(y);
  if (Math.abs(y - Math.trunc(y)) === 0.5 && r % 2 !== 0) r -= 1;
  return r / 1e12;
}

const MAX64 = (1n << 64n) - 1n;

/** `_float_hash_arr(row, offset)`: the low 64 bits of SHA-256 of the rounded row (and the offset), in [0, 1]. */
function rowHash(row: Float64Array, offset: number): number {
  const data = Buffer.alloc(row.length * 8 + (offset !== 0 ? 8 : 0));
  row.forEach((v, i) => data.writeDoubleLE(around12(v), i * 8));
  if (offset !== 0) data.writeBigUInt64LE(BigInt(offset), row.length * 8);
  const digest = createHash('sha256').update(data).digest();
  return Number(digest.readBigUInt64BE(24) & MAX64) / Number(MAX64);
}

/**
 * `AddFingerprintFeaturesStep`: per row, the hash of its values salted with the training table's
 * cell count; training rows that repeat count the salt up until their hash is unique.
 */
export function fingerprint(columns: readonly Column[], train: number): Column {
  const rows = columns[0]?.length ?? 0;
  const salt = train * columns.length;
  const row = (r: number): Float64Array => Float64Array.from(columns, (c) => c[r]);
  const out = new Float64Array(rows);
  const seen = new Set<number>();
  const counter = new Map<number, number>();
  for (let r = 0; r < train; r++) {
    const values = row(r);
    const base = rowHash(values, salt);
    let add = counter.get(base) ?? 0;
    let h = rowHash(values, salt + add);
    const allNaN = values.every((v) => Number.isNaN(v));
    while (seen.has(h) && !allNaN) h = rowHash(values, salt + ++add);
    out[r] = h;
    seen.add(h);
    counter.set(base, add + 1);
  }
  for (let r = train; r < rows; r++) out[r] = rowHash(row(r), salt);
  return out;
}
