import type { TransitionRows } from './arima-state-space.ts';

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
  /** The increment's factor, column k at k * rd (W2: scratch for the next one). */
  W: Float64Array;
  W2: Float64Array;
  S: Float64Array;
  u: Float64Array;
  Su: Float64Array;
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
  const pn0 = c.pn0;
  const at = (i: number, j: number) => (i >= j ? i * rd + j : j * rd + i);
  // Each pass over the remainder also finds its largest entry (`most`, NaN if any entry is NaN)
  // and its largest diagonal entry (the first of equals, row by row) for the next pivot.
  let piv = -1;
  let best = 0;
  let most = 0;
  let nan = false;
  for (let i = 0; i < rd; i++) {
    const row = i * rd;
    for (let j = 0; j <= i; j++) {
      const x = N[row + j] - pn0[row + j];
      N[row + j] = x;
      const v = Math.abs(x);
      if (v > most) most = v;
      else if (v !== v) nan = true;
      if (j === i && v > best) {
        best = v;
        piv = i;
      }
    }
  }
  let first = 0;
  c.S.fill(0);
  for (let k = 0; ; k++) {
    if (nan) most = NaN;
    if (k === 0) first = most;
    if (!(first > 0)) return 0;
    if (most <= CHANDRA_TOL * first) return k;
    // Only diagonal pivots: an off-diagonal-only remainder would need 2 x 2 pivots.
    if (k === CHANDRA_MAX_RANK || best < 0.01 * most) return 0;
    const dk = N[piv * rd + piv];
    const w = c.W;
    const off = k * rd;
    for (let i = 0; i < rd; i++) w[off + i] = N[at(i, piv)] / dk;
    c.S[k * CHANDRA_MAX_RANK + k] = dk;
    piv = -1;
    best = 0;
    most = 0;
    nan = false;
    for (let i = 0; i < rd; i++) {
      const wi = w[off + i] * dk;
      const row = i * rd;
      for (let j = 0; j <= i; j++) {
        const x = N[row + j] - wi * w[off + j];
        N[row + j] = x;
        const v = Math.abs(x);
        if (v > most) most = v;
        else if (v !== v) nan = true;
        if (j === i && v > best) {
          best = v;
          piv = i;
        }
      }
    }
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
  const { W, W2, S, u, Su } = c;
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
  // W <- T (W - M(t+1) u' / gain(t+1)), column by column: shift rows copy an entry of
  // v = W - M u' / gain(t+1), general rows combine a few, zero rows are zero.
  const { src, start, cols, vals, general, ng, shifts, ns, fresh, nf, kind } = T;
  for (let k = 0; k < alpha; k++) {
    const col = k * rd;
    const f = u[k] / next;
    for (let s = 0; s < ns; s++) {
      const i = shifts[s];
      const j = src[i];
      W2[col + i] = W[col + j] - M[j] * f;
    }
    for (let g = 0; g < ng; g++) {
      const i = general[g];
      let s = 0;
      for (let e = start[i]; e < start[i + 1]; e++) {
        const j = cols[e];
        s += vals[e] * (W[col + j] - M[j] * f);
      }
      W2[col + i] = s;
    }
    for (let h = 0; h < nf; h++) if (kind[fresh[h]] === 0) W2[col + fresh[h]] = 0;
  }
  for (let k = 0; k < alpha; k++) for (let j = 0; j < alpha; j++) S[k * K + j] += (Su[k] * Su[j]) / gain;
  // The new W is W2: swap the buffers rather than copy.
  c.W = W2;
  c.W2 = W;
  return next;
}
