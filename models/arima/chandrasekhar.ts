import type { TransitionRows } from './state-space.ts';

/**
 * The Chandrasekhar recursions that the filter (kalman.ts) switches to when only the likelihood
 * is wanted: once the differencing states are no longer diffuse, the predicted covariance moves
 * by a low-rank increment W S W' each step, and these follow the increment (rank alpha) instead
 * of the whole covariance.
 */

/** Largest rank of the covariance increment followed by the Chandrasekhar recursions. */
const CHANDRA_MAX_RANK = 8;
/** Steps to wait before trying again when the increment was not of low rank, and tries. */
export const CHANDRA_RETRY = 12;
export const CHANDRA_ATTEMPTS = 3;
/**
 * What is left of the increment below this fraction of its largest entry is dropped: the
 * rounding noise of the diffuse start (about 1e-10 of it), not part of the model.
 */
const CHANDRA_TOL = 1e-9;

let chScratch: {
  rd: number;
  pn0: Float64Array;
  pn1: Float64Array;
  W: Float64Array;
  W2: Float64Array;
  S: Float64Array;
  u: Float64Array;
  Su: Float64Array;
  v: Float64Array;
  m0: Float64Array;
} | null = null;

export function chandraScratch(rd: number) {
  if (!chScratch || chScratch.rd !== rd) {
    chScratch = {
      rd,
      pn0: new Float64Array(rd * rd),
      pn1: new Float64Array(rd * rd),
      W: new Float64Array(CHANDRA_MAX_RANK * rd),
      W2: new Float64Array(CHANDRA_MAX_RANK * rd),
      S: new Float64Array(CHANDRA_MAX_RANK * CHANDRA_MAX_RANK),
      u: new Float64Array(CHANDRA_MAX_RANK),
      Su: new Float64Array(CHANDRA_MAX_RANK),
      v: new Float64Array(rd),
      m0: new Float64Array(rd),
    };
  }
  return chScratch;
}

/**
 * Factors the increment Pn1 - Pn0 (lower triangles in pn1, pn0) as W S W', S diagonal, by
 * symmetric elimination pivoting on the largest diagonal entry. Returns the rank kept, or 0
 * when the increment is not of low rank (or a pivot cannot be taken from the diagonal).
 */
export function factorIncrement(c: ReturnType<typeof chandraScratch>, rd: number): number {
  const N = c.pn1;
  for (let i = 0; i < rd; i++) for (let j = 0; j <= i; j++) N[i * rd + j] -= c.pn0[i * rd + j];
  const at = (i: number, j: number) => (i >= j ? i * rd + j : j * rd + i);
  let first = 0;
  c.S.fill(0);
  for (let k = 0; ; k++) {
    let piv = -1;
    let best = 0;
    let most = 0;
    for (let i = 0; i < rd; i++) {
      const row = i * rd;
      for (let j = 0; j < i; j++) most = Math.max(most, Math.abs(N[row + j]));
      const v = Math.abs(N[row + i]);
      most = Math.max(most, v);
      if (v > best) {
        best = v;
        piv = i;
      }
    }
    if (k === 0) first = most;
    if (!(first > 0)) return 0;
    if (most <= CHANDRA_TOL * first) return k;
    // Only diagonal pivots: an off-diagonal-only remainder would need 2 x 2 pivots.
    if (k === CHANDRA_MAX_RANK || best < 0.01 * most) return 0;
    const dk = N[piv * rd + piv];
    const w = c.W.subarray(k * rd, (k + 1) * rd);
    for (let i = 0; i < rd; i++) w[i] = N[at(i, piv)] / dk;
    for (let i = 0; i < rd; i++) {
      const wi = w[i] * dk;
      for (let j = 0; j <= i; j++) N[i * rd + j] -= wi * w[j];
    }
    c.S[k * CHANDRA_MAX_RANK + k] = dk;
  }
}

/**
 * One step of the Chandrasekhar recursions (Morf, Sidhu & Kailath 1974): with the increment
 * Pn(t+1) - Pn(t) = W S W', u = Z W,
 *   M(t+1) = M(t) + W S u,   gain(t+1) = gain(t) + u' S u,
 *   W <- T (W - M(t+1) u' / gain(t+1)),   S <- S + S u u' S / gain(t)
 * (the filtered covariance moves by (I - K(t+1) Z) W S' W' (I - K(t+1) Z)', then T carries it).
 * Updates M and W, S in place; returns the next gain.
 */
export function chandrasekharStep(
  c: ReturnType<typeof chandraScratch>,
  alpha: number,
  M: Float64Array,
  gain: number,
  T: TransitionRows,
  dI: Int32Array,
  dV: Float64Array,
  rd: number,
): number {
  const { W, W2, S, u, Su, v } = c;
  const K = CHANDRA_MAX_RANK;
  const nd = dI.length;
  for (let k = 0; k < alpha; k++) {
    const col = k * rd;
    let s = W[col];
    for (let t = 0; t < nd; t++) s += dV[t] * W[col + dI[t]];
    u[k] = s;
  }
  let uSu = 0;
  for (let k = 0; k < alpha; k++) {
    let s = 0;
    for (let j = 0; j < alpha; j++) s += S[k * K + j] * u[j];
    Su[k] = s;
    uSu += u[k] * s;
  }
  for (let i = 0; i < rd; i++) {
    let s = M[i];
    for (let k = 0; k < alpha; k++) s += W[k * rd + i] * Su[k];
    M[i] = s;
  }
  const next = gain + uSu;
  // W <- T (W - M(t+1) u' / gain(t+1)), column by column.
  for (let k = 0; k < alpha; k++) {
    const col = k * rd;
    const f = u[k] / next;
    for (let i = 0; i < rd; i++) v[i] = W[col + i] - M[i] * f;
    applyTransition(T, v, W2, col, rd);
  }
  for (let k = 0; k < alpha; k++) for (let j = 0; j < alpha; j++) S[k * K + j] += (Su[k] * Su[j]) / gain;
  W.set(W2.subarray(0, alpha * rd));
  return next;
}

/** out[off + i] = (T v)[i]. */
function applyTransition(T: TransitionRows, v: Float64Array, out: Float64Array, off: number, rd: number): void {
  const { kind, src, start, cols, vals } = T;
  for (let i = 0; i < rd; i++) {
    const ki = kind[i];
    if (ki === 1) out[off + i] = v[src[i]];
    else if (ki === 0) out[off + i] = 0;
    else {
      let s = 0;
      for (let e = start[i]; e < start[i + 1]; e++) s += vals[e] * v[cols[e]];
      out[off + i] = s;
    }
  }
}
