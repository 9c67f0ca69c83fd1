/**
 * The state-space form of an ARIMA model that the Kalman filter (kalman.ts) runs, the form of
 * Harvey (1989) / Durbin & Koopman (2001) that R's arima() uses: the ARMA block of size
 * r = max(p, q + 1), then the last d + mD undifferenced values. Matrices are column-major (entry
 * (i, j) of an n x n matrix at i + n * j); the transition matrix is also kept as sparse rows.
 */

import { stationaryCovariance } from './stationary-covariance.ts';

/** A filtered ARIMA state-space model (the part of R's makeARIMA list the filter needs). */
export interface ArimaStateSpace {
  readonly phi: Float64Array;
  readonly theta: Float64Array;
  /** Differencing coefficients: y_t - sum delta_k y_{t-k} is the ARMA part. */
  readonly delta: Float64Array;
  /** Size of the ARMA block. */
  readonly r: number;
  /** Full state size r + delta.length. */
  readonly rd: number;
  /** State mean (filtered at the last observation after kalmanLikelihood). */
  readonly a: Float64Array;
  /** State covariance (filtered, after kalmanLikelihood without sumsOnly). */
  readonly P: Float64Array;
  /** Initial state covariance: the filter starts from it and leaves it as is. */
  readonly Pn: Float64Array;
}

/** Variance given to the diffuse (differencing) states. */
export const KAPPA = 1e6;

/**
 * Polynomial of (1 - B)^d (1 - B^m)^D as differencing coefficients delta (y_t = sum delta_k
 * y_{t-k} + w_t), so delta has length d + mD.
 */
export function differencingPolynomial(d: number, D: number, m: number): Float64Array {
  let poly = new Float64Array([1]);
  const mul = (f: Float64Array) => {
    const out = new Float64Array(poly.length + f.length - 1);
    for (let i = 0; i < poly.length; i++) for (let j = 0; j < f.length; j++) out[i + j] += poly[i] * f[j];
    poly = out;
  };
  for (let i = 0; i < d; i++) mul(new Float64Array([1, -1]));
  if (D > 0) {
    const f = new Float64Array(m + 1);
    f[0] = 1;
    f[m] = -1;
    for (let i = 0; i < D; i++) mul(f);
  }
  const delta = new Float64Array(poly.length - 1);
  for (let i = 1; i < poly.length; i++) delta[i - 1] = -poly[i];
  return delta;
}

/**
 * Builds the state-space model (R's makeARIMA) with the filter at its initial state:
 *   ARMA block: alpha_t = [phi | shift] alpha_{t-1} + (1, theta) e_t
 *   y_t = alpha_t[0] + sum_k delta_k * (lagged y)_k      (delta: the differencing polynomial)
 * The ARMA block starts from its stationary covariance (Gardner, Harvey & Phillips 1980, AS 154);
 * the differencing states start diffuse (variance kappa = 1e6), and the observations whose
 * prediction variance is still >= 1e4 are left out of the likelihood.
 */
export function makeStateSpace(phi: Float64Array, theta: Float64Array, delta: Float64Array): ArimaStateSpace {
  const p = phi.length;
  const q = theta.length;
  const r = Math.max(p, q + 1);
  const d = delta.length;
  const rd = r + d;
  const ss: ArimaStateSpace = {
    phi: Float64Array.from(phi),
    theta: Float64Array.from(theta),
    delta: Float64Array.from(delta),
    r,
    rd,
    a: new Float64Array(rd),
    P: new Float64Array(rd * rd),
    Pn: new Float64Array(rd * rd),
  };
  resetStateSpace(ss);
  return ss;
}

/** Puts the filter back at its initial state for the model's current phi and theta. */
export function resetStateSpace(ss: ArimaStateSpace): void {
  const { r, rd } = ss;
  ss.a.fill(0);
  ss.Pn.fill(0);
  if (r > 1) {
    const q0 = new Float64Array(r * r);
    stationaryCovariance(ss.phi, ss.theta, q0);
    for (let j = 0; j < r; j++) for (let i = 0; i < r; i++) ss.Pn[i + rd * j] = q0[i + r * j];
  } else {
    ss.Pn[0] = ss.phi.length > 0 ? 1 / (1 - ss.phi[0] * ss.phi[0]) : 1;
  }
  for (let i = r; i < rd; i++) ss.Pn[i + rd * i] = KAPPA;
}

/**
 * Sparse rows of the transition matrix T: row i is zero (kind 0), a pure shift T[i, src] = 1
 * (kind 1), or a short general row (kind 2, entries in cols/vals from start[i]). With the lists
 * the filter's covariance step walks (slot-covariance.ts), each of them in row order: the
 * general rows, the shift rows, the fresh rows (not a shift: zero or general), the states that
 * no shift row reads (as many as the fresh rows), and the non-zero entries of R = (1, theta).
 * The arrays are sized for the state; the counts say how much of each list is in use.
 */
export interface TransitionRows {
  readonly rd: number;
  readonly kind: Uint8Array;
  readonly src: Int32Array;
  readonly start: Int32Array;
  readonly cols: Int32Array;
  readonly vals: Float64Array;
  readonly general: Int32Array;
  ng: number;
  readonly shifts: Int32Array;
  ns: number;
  readonly fresh: Int32Array;
  nf: number;
  readonly freed: Int32Array;
  /** Non-zero entries of R = (1, theta, 0, ...): their states and values. */
  readonly rIdx: Int32Array;
  readonly rVal: Float64Array;
  nr: number;
  /** Scratch: states read by some shift row. */
  readonly read: Uint8Array;
}

export function emptyTransitionRows(rd: number): TransitionRows {
  return {
    rd,
    kind: new Uint8Array(rd),
    src: new Int32Array(rd),
    start: new Int32Array(rd + 1),
    cols: new Int32Array(3 * rd + 2),
    vals: new Float64Array(3 * rd + 2),
    general: new Int32Array(rd),
    ng: 0,
    shifts: new Int32Array(rd),
    ns: 0,
    fresh: new Int32Array(rd),
    nf: 0,
    freed: new Int32Array(rd),
    rIdx: new Int32Array(rd),
    rVal: new Float64Array(rd),
    nr: 0,
    read: new Uint8Array(rd),
  };
}

/** The transition rows of the model (phi, theta, delta), into `into` when given (sized for rd). */
export function transitionRows(phi: Float64Array, theta: Float64Array, delta: Float64Array, r: number, rd: number, into?: TransitionRows): TransitionRows {
  const T = into && into.rd === rd ? into : emptyTransitionRows(rd);
  const { kind, src, start, cols, vals, general, shifts, fresh, freed, rIdx, rVal, read } = T;
  const p = phi.length;
  let ne = 0;
  let ng = 0;
  let ns = 0;
  let nf = 0;
  read.fill(0);
  for (let i = 0; i < rd; i++) {
    start[i] = ne;
    if (i < r) {
      if (i < p && phi[i] !== 0) {
        cols[ne] = 0;
        vals[ne++] = phi[i];
      }
      if (i < r - 1) {
        cols[ne] = i + 1;
        vals[ne++] = 1;
      }
    } else if (i === r) {
      cols[ne] = 0;
      vals[ne++] = 1;
      for (let k = 0; k < delta.length; k++) {
        if (delta[k] !== 0) {
          cols[ne] = r + k;
          vals[ne++] = delta[k];
        }
      }
    } else {
      cols[ne] = i - 1;
      vals[ne++] = 1;
    }
    const count = ne - start[i];
    if (count === 0) {
      kind[i] = 0;
      fresh[nf++] = i;
    } else if (count === 1 && vals[start[i]] === 1) {
      kind[i] = 1;
      src[i] = cols[start[i]];
      read[src[i]] = 1;
      shifts[ns++] = i;
      ne = start[i]; // a shift keeps no entry
    } else {
      kind[i] = 2;
      general[ng++] = i;
      fresh[nf++] = i;
    }
  }
  start[rd] = ne;
  let k = 0;
  for (let i = 0; i < rd; i++) if (!read[i]) freed[k++] = i;
  let nr = 0;
  for (let i = 0; i <= theta.length && i < r; i++) {
    const v = i === 0 ? 1 : theta[i - 1];
    if (v !== 0) {
      rIdx[nr] = i;
      rVal[nr++] = v;
    }
  }
  T.ng = ng;
  T.ns = ns;
  T.nf = nf;
  T.nr = nr;
  return T;
}
