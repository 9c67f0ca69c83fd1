/**
 * Complex Exponential Smoothing's state-space recursion (Svetunkov and Kourentzes), as statsforecast
 * 2.1.1 runs it (its C++ `cesupdate`, `cesfcst`, `cescalc`), step for step and with the same
 * floating-point operations in the same order, so that fitted parameters and forecasts agree with
 * the reference to the last bits. The variants N, S, P and F differ in their season (`stateMatrix`).
 */

export type CesVariant = 'N' | 'S' | 'P' | 'F';
export const CES_VARIANTS: readonly CesVariant[] = ['N', 'S', 'P', 'F'];

/** Columns of the state matrix: the complex level, plus a real or complex seasonal part. */
export const COMPONENTS: Readonly<Record<CesVariant, number>> = { N: 2, S: 2, P: 3, F: 4 };

/** The reference's season codes; `season > SIMPLE` means a separate seasonal component. */
const NONE = 0;
const SIMPLE = 1;
const PARTIAL = 2;
const FULL = 3;
const CODE: Readonly<Record<CesVariant, number>> = { N: NONE, S: SIMPLE, P: PARTIAL, F: FULL };

/** The reference's "not available" sentinel, returned when a one-step forecast hits it. */
export const NA = -99999.0;
const TOL = 1.0e-10;

/** Smoothing parameters; beta0 (P, F) and beta1 (F) are NaN where the variant has none. */
export interface CesParameters {
  alpha0: number;
  alpha1: number;
  beta0: number;
  beta1: number;
}

/** A state matrix with its shape: `k` columns, lag `m` (1 for N). */
export interface StateMatrix {
  values: Float64Array;
  k: number;
  m: number;
  season: number;
}

/**
 * The state matrix of a variant: n + 2m rows of `COMPONENTS[variant]` columns, row-major (m
 * initial rows, one row per observation, then m trailing rows: the forecast of the next season,
 * which the backward pass starts from). The complex level is (l, c) = columns 0..1, updated from
 * the one-step error e by l' = l - (1 - a1) c + (a0 - a1) e, c' = l + (1 - a0) c + (a0 + a1) e,
 * i.e. the complex smoothing parameter a0 + i a1. The variants' seasons:
 *   N  no season (lag 1 throughout),
 *   S  "simple" season: the complex level itself is lagged by m (one level per season position),
 *   P  "partial": a real seasonal component (column 2) at lag m, smoothed by b0,
 *   F  "full": a complex seasonal pair (columns 2..3) at lag m, smoothed by b0 + i b1.
 */
export function stateMatrix(variant: CesVariant, m: number, rows: number): StateMatrix {
  const k = COMPONENTS[variant];
  return { values: new Float64Array(rows * k), k, m, season: CODE[variant] };
}

/**
 * `cesupdate`: row i from the rows before it and the observation y. The error is recomputed here
 * from the states (not taken from the caller's forecast), as the reference does: for P and F it
 * is (y - level) - season, which can differ in the last bit from y - (level + season).
 */
function update(s: StateMatrix, i: number, p: CesParameters, y: number): void {
  const { values: v, k, m, season } = s;
  const prev = (i - 1) * k;
  const lagged = (i - m) * k;
  let e = season === SIMPLE ? y - v[lagged] : y - v[prev];
  if (season > SIMPLE) e -= v[lagged + 2];
  const from = season === SIMPLE ? lagged : prev;
  const s0 = v[from];
  const s1 = v[from + 1];
  const row = i * k;
  v[row] = s0 - (1.0 - p.alpha1) * s1 + (p.alpha0 - p.alpha1) * e;
  v[row + 1] = s0 + (1.0 - p.alpha0) * s1 + (p.alpha0 + p.alpha1) * e;
  if (season === PARTIAL) {
    v[row + 2] = v[lagged + 2] + p.beta0 * e;
  } else if (season === FULL) {
    const s2 = v[lagged + 2];
    const s3 = v[lagged + 3];
    v[row + 2] = s2 - (1.0 - p.beta1) * s3 + (p.beta0 - p.beta1) * e;
    v[row + 3] = s2 + (1.0 - p.beta0) * s3 + (p.beta0 + p.beta1) * e;
  }
}

/** The one-step forecast from the rows before i (the reference's `f[0]`). */
function oneStep(s: StateMatrix, i: number): number {
  const { values: v, k, m, season } = s;
  let f = season === SIMPLE ? v[(i - m) * k] : v[(i - 1) * k];
  if (season > SIMPLE) f += v[(i - m) * k + 2];
  return f;
}

/**
 * `cesfcst`: h forecasts from the m state rows ending before row i. Each forecast is fed back as
 * if observed (so the error is zero up to rounding). `buf` (m + h rows) receives the states.
 */
export function forecastFrom(s: StateMatrix, i: number, p: CesParameters, h: number, out: Float64Array, buf?: StateMatrix): StateMatrix {
  const { k, m } = s;
  const b = buf ?? { values: new Float64Array((m + h) * k), k, m, season: s.season };
  b.values.set(s.values.subarray((i - m) * k, i * k));
  for (let ih = m; ih < m + h; ih++) {
    const f = oneStep(b, ih);
    out[ih - m] = f;
    update(b, ih, p, f);
  }
  return b;
}

/**
 * `cescalc_pass`: one filtering pass over y (forward or, with y reversed, backward), writing the
 * one-step errors into e; returns their sum of squares, or NA. This is `oneStep` then `update`
 * inlined, with the coefficients (1 - a1, a0 - a1, ...) taken out of the loop: the same doubles
 * and operations as the reference, faster. The reference also accumulates
 * 1..nmse-step errors here (its `amse`), a statistic nothing downstream of AutoCES uses; we skip it.
 */
function pass(y: Float64Array, s: StateMatrix, p: CesParameters, e: Float64Array): number {
  const { values: v, k, m, season } = s;
  const n = y.length;
  const c1 = 1.0 - p.alpha1;
  const c0 = 1.0 - p.alpha0;
  const d = p.alpha0 - p.alpha1;
  const g = p.alpha0 + p.alpha1;
  const b0 = p.beta0;
  const cb1 = 1.0 - p.beta1;
  const cb0 = 1.0 - p.beta0;
  const db = p.beta0 - p.beta1;
  const gb = p.beta0 + p.beta1;
  const seasonal = season > SIMPLE;
  let lik = 0.0;
  for (let t = 0; t < n; t++) {
    const row = (t + m) * k;
    const lagged = row - m * k;
    const from = season === SIMPLE ? lagged : row - k;
    const s0 = v[from];
    const s1 = v[from + 1];
    const yt = y[t];
    // The forecast, and the error `update` recomputes: (y - level) - season for P and F.
    let f = s0;
    let u = yt - s0;
    if (seasonal) {
      const sea = v[lagged + 2];
      f = s0 + sea;
      u -= sea;
    }
    if (Math.abs(f - NA) < TOL) return NA;
    const err = yt - f;
    e[t] = err;
    v[row] = s0 - c1 * s1 + d * u;
    v[row + 1] = s0 + c0 * s1 + g * u;
    if (season === PARTIAL) {
      v[row + 2] = v[lagged + 2] + b0 * u;
    } else if (season === FULL) {
      const s2 = v[lagged + 2];
      const s3 = v[lagged + 3];
      v[row + 2] = s2 - cb1 * s3 + db * u;
      v[row + 3] = s2 + cb0 * s3 + gb * u;
    }
    lik += err * err;
  }
  return lik;
}

/** The m trailing rows: a season's forecast from the last observation's states. */
function fillTrailing(s: StateMatrix, n: number, p: CesParameters, scratch: Scratch): void {
  const { k, m } = s;
  forecastFrom(s, n + m, p, m, scratch.f, scratch.buf);
  s.values.set(scratch.buf.values.subarray(m * k, 2 * m * k), (n + m) * k);
}

/** Reverses the order of the matrix's rows in place (the backward pass reads it top-down). */
function reverseRows(s: StateMatrix): void {
  const { values: v, k } = s;
  const rows = v.length / k;
  for (let a = 0, b = rows - 1; a < b; a++, b--) {
    for (let c = 0; c < k; c++) {
      const t = v[a * k + c];
      v[a * k + c] = v[b * k + c];
      v[b * k + c] = t;
    }
  }
}

/** Buffers one fit reuses across its many evaluations. */
export interface Scratch {
  f: Float64Array;
  buf: StateMatrix;
}

export function scratchFor(s: StateMatrix): Scratch {
  return { f: new Float64Array(s.m), buf: { values: new Float64Array(2 * s.m * s.k), k: s.k, m: s.m, season: s.season } };
}

/**
 * `cescalc` with backfitting: forward pass, backward pass over the reversed series (starting from
 * the forward pass's trailing states), forward pass again from the backcast initial states. Returns
 * n log(sum of squared one-step errors) of the last pass (the concentrated -2 log-likelihood up to
 * constants), or NA. `s` must hold the initial states in its first m rows; on return it holds the
 * final pass's states and e its one-step errors, oldest first. `yReversed` is y backwards.
 */
export function cescalc(y: Float64Array, yReversed: Float64Array, s: StateMatrix, p: CesParameters, e: Float64Array, scratch: Scratch): number {
  const n = y.length;
  let lik = pass(y, s, p, e);
  if (Math.abs(lik - NA) < TOL) return NA;
  fillTrailing(s, n, p, scratch);
  // Backcast. (The reference also reverses e around this pass; every pass overwrites all of e.)
  reverseRows(s);
  lik = pass(yReversed, s, p, e);
  if (Math.abs(lik - NA) < TOL) return NA;
  fillTrailing(s, n, p, scratch);
  reverseRows(s);
  lik = pass(y, s, p, e);
  if (Math.abs(lik - NA) < TOL) return NA;
  fillTrailing(s, n, p, scratch);
  return n * Math.log(lik);
}

/**
 * How much the states grow per step with nothing new observed (y = 0 after a unit start): the
 * spectral radius of the recursion's discount matrix, read off the recursion itself over many
 * seasons. Above 1 the filter amplifies its own errors: a fit on a short history can stay
 * unnoticed there and explode on a longer one. The box bounds of the estimation do not exclude it.
 */
export function discountGrowth(variant: CesVariant, m: number, p: CesParameters): number {
  const lags = variant === 'N' ? 1 : m;
  const half = 50 * lags;
  const s = stateMatrix(variant, lags, 2 * half + 2 * lags);
  s.values.fill(1, 0, lags * s.k);
  const zeros = new Float64Array(2 * half);
  pass(zeros, s, p, new Float64Array(2 * half));
  const size = (row: number) => {
    let sum = 0;
    for (let r = row; r < row + lags; r++) for (let c = 0; c < s.k; c++) sum += s.values[r * s.k + c] ** 2;
    return Math.sqrt(sum);
  };
  const growth = (size(2 * half) / size(half)) ** (1 / half);
  return Number.isFinite(growth) ? growth : Infinity;
}
