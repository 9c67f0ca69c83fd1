/**
 * Exact Gaussian likelihood of an ARIMA model by the Kalman filter, and forecasting from the
 * filtered state, in the state-space form of Harvey (1989) / Durbin & Koopman (2001) that R's
 * arima() uses:
 *
 *   state  = (ARMA block of size r = max(p, q + 1), then the last d' = d + mD undifferenced values)
 *   ARMA block: alpha_t = [phi | shift] alpha_{t-1} + (1, theta) e_t
 *   y_t    = alpha_t[0] + sum_k delta_k * (lagged y)_k      (delta: the differencing polynomial)
 *
 * The ARMA block starts from its stationary covariance (computed as Gardner, Harvey & Phillips
 * 1980, algorithm AS 154); the differencing states start diffuse (variance kappa = 1e6), and the
 * observations whose prediction variance is still >= 1e4 are left out of the likelihood.
 *
 * The model's matrices are column-major, entry (i, j) of an n x n matrix at i + n * j. The
 * filter itself works on lower triangles and skips the known zeros of the transition matrix.
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

export { stationaryCovariance };

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

/** Builds the state-space model (R's makeARIMA) with the filter at its initial state. */
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

/** Sufficient statistics of the filtered likelihood. */
export interface LikelihoodSums {
  /** Sum of squared standardised innovations. */
  ssq: number;
  /** Sum of log prediction variances. */
  sumlog: number;
  /** Number of observations that entered the likelihood. */
  nu: number;
}

/**
 * Sparse rows of the transition matrix T: row i is zero (kind 0), a pure shift T[i, src] = 1
 * (kind 1), or a short general row (kind 2, entries in cols/vals from start[i]).
 */
interface TransitionRows {
  readonly kind: Uint8Array;
  readonly src: Int32Array;
  readonly start: Int32Array;
  readonly cols: Int32Array;
  readonly vals: Float64Array;
  /** The general rows, in order. */
  readonly general: Int32Array;
}

function transitionRows(phi: Float64Array, delta: Float64Array, r: number, rd: number): TransitionRows {
  const p = phi.length;
  const kind = new Uint8Array(rd);
  const src = new Int32Array(rd);
  const start = new Int32Array(rd + 1);
  const cols: number[] = [];
  const vals: number[] = [];
  const general: number[] = [];
  for (let i = 0; i < rd; i++) {
    start[i] = cols.length;
    const entries: [number, number][] = [];
    if (i < r) {
      if (i < p && phi[i] !== 0) entries.push([0, phi[i]]);
      if (i < r - 1) entries.push([i + 1, 1]);
    } else if (i === r) {
      entries.push([0, 1]);
      for (let k = 0; k < delta.length; k++) if (delta[k] !== 0) entries.push([r + k, delta[k]]);
    } else {
      entries.push([i - 1, 1]);
    }
    if (entries.length === 0) kind[i] = 0;
    else if (entries.length === 1 && entries[0][1] === 1) {
      kind[i] = 1;
      src[i] = entries[0][0];
    } else {
      kind[i] = 2;
      general.push(i);
      for (const [c, v] of entries) {
        cols.push(c);
        vals.push(v);
      }
    }
  }
  start[rd] = cols.length;
  return { kind, src, start, cols: Int32Array.from(cols), vals: Float64Array.from(vals), general: Int32Array.from(general) };
}

export interface FilterOptions {
  /**
   * Only the likelihood sums are needed (ss.P is left undefined): once the differencing states
   * are no longer diffuse, the covariance moves by a low-rank increment each step, and the
   * Chandrasekhar recursions follow that increment instead of the whole covariance.
   */
  readonly sumsOnly?: boolean;
}

/** Largest rank of the covariance increment followed by the Chandrasekhar recursions. */
const CHANDRA_MAX_RANK = 8;
/** Steps to wait before trying again when the increment was not of low rank, and tries. */
const CHANDRA_RETRY = 12;
const CHANDRA_ATTEMPTS = 3;
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

function chandraScratch(rd: number) {
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
function factorIncrement(c: ReturnType<typeof chandraScratch>, rd: number): number {
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
function chandrasekharStep(
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

// Reusable scratch for the filter.
let scratch: {
  rd: number;
  P: Float64Array;
  mm: Float64Array;
  snap: Float64Array;
  anew: Float64Array;
  M: Float64Array;
  Mp: Float64Array;
  Kp: Float64Array;
  slot: Int32Array;
  next: Int32Array;
  used: Uint8Array;
} | null = null;

function filterScratch(rd: number) {
  if (!scratch || scratch.rd !== rd) {
    scratch = {
      rd,
      P: new Float64Array(rd * rd),
      mm: new Float64Array(rd * rd),
      snap: new Float64Array(rd * rd),
      anew: new Float64Array(rd),
      M: new Float64Array(rd),
      Mp: new Float64Array(rd),
      Kp: new Float64Array(rd),
      slot: new Int32Array(rd),
      next: new Int32Array(rd),
      used: new Uint8Array(rd),
    };
  }
  return scratch;
}

/**
 * Relative change of the filtered covariance below which it is taken as converged: the
 * Riccati recursion has reached its fixed point up to rounding noise (about 1e-14 here), and
 * the remaining steps reuse its gain. This changes the likelihood at the level of rounding.
 */
const STEADY_TOL = 1e-13;
/** Steps between convergence checks (each compares two consecutive steps). */
const CHECK_EVERY = 8;

/**
 * Runs the Kalman filter over y (NaN = missing), updating ss.a and ss.P in place so that they
 * hold the filtered state at the end (ss.Pn keeps the initial covariance). Writes standardised
 * innovations into resid if given.
 *
 * Most rows of the transition matrix T shift the state by one place, so most of T P T' is P
 * itself with relabelled states. The covariance is therefore stored by physical slots with a
 * state -> slot map: a shift only relabels slots, and only the few rows holding AR or
 * differencing coefficients (and the new ARMA state) are computed each step. Covariances are
 * symmetric; only the lower triangle in slot order is stored. Once the filtered covariance stops
 * changing (steady state) only the state mean is updated.
 */
export function kalmanLikelihood(y: ArrayLike<number>, ss: ArimaStateSpace, resid?: Float64Array, opts: FilterOptions = {}): LikelihoodSums {
  const n = y.length;
  const fast = opts.sumsOnly === true && resid === undefined;
  const { phi, theta, delta, r, rd, a } = ss;
  const p = phi.length;
  const q = theta.length;
  const d = delta.length;
  const { P, mm, snap, anew, M, Mp, Kp, slot, next, used } = filterScratch(rd);
  const T = transitionRows(phi, delta, r, rd);
  const { kind } = T;
  const dIdx: number[] = [];
  for (let k = 0; k < d; k++) if (delta[k] !== 0) dIdx.push(k);
  const nd = dIdx.length;
  const dI = Int32Array.from(dIdx, (k) => r + k);
  const dV = Float64Array.from(dIdx, (k) => delta[k]);
  // R = (1, theta): the innovation loading of the ARMA block.
  const Rv = new Float64Array(q + 1);
  Rv[0] = 1;
  for (let k = 0; k < q; k++) Rv[k + 1] = theta[k];
  // Rows whose new state is computed rather than relabelled.
  const fresh = Int32Array.from(Array.from(kind.keys()).filter((i) => kind[i] !== 1));

  for (let i = 0; i < rd; i++) {
    slot[i] = i;
    for (let j = 0; j <= i; j++) P[i * rd + j] = ss.Pn[i + rd * j];
  }
  let mayFreeze = true;
  for (let l = 0; l < n; l++) if (Number.isNaN(y[l])) mayFreeze = false;
  let frozen = false;
  let calm = 0;
  let gain = 0;
  let diffuse = true;
  // Chandrasekhar recursions: 0 not yet, 1 Pn saved at the previous step, 2 running, -1 never.
  let chandra = fast && mayFreeze ? 0 : -1;
  let alpha = 0;
  let gain0 = 0;
  let retryAt = -1;
  let attempts = 0;
  const ch = fast ? chandraScratch(rd) : null;

  let ssq = 0;
  let sumlog = 0;
  let nu = 0;
  for (let l = 0; l < n; l++) {
    // Predicted state anew = T a (in state order).
    for (let i = 0; i < r; i++) {
      let tmp = i < r - 1 ? a[i + 1] : 0;
      if (i < p) tmp += phi[i] * a[0];
      anew[i] = tmp;
    }
    if (d > 0) {
      for (let i = r + 1; i < rd; i++) anew[i] = a[i - 1];
      let tmp = a[0];
      for (let t = 0; t < nd; t++) tmp += dV[t] * a[dI[t]];
      anew[r] = tmp;
    }
    if (l > 0 && !frozen && chandra !== 2) predictCovariance(P, mm, slot, next, used, T, fresh, Rv, rd);
    const yl = y[l];
    if (!Number.isNaN(yl)) {
      let res = yl - anew[0];
      for (let t = 0; t < nd; t++) res -= dV[t] * anew[dI[t]];
      if (chandra === 2) {
        if (gain < 1e4) {
          nu++;
          ssq += (res * res) / gain;
          sumlog += Math.log(gain);
        }
        for (let i = 0; i < rd; i++) a[i] = anew[i] + (M[i] * res) / gain;
        gain = chandrasekharStep(ch!, alpha, M, gain, T, dI, dV, rd);
        continue;
      }
      if (!frozen) {
        predictionCovariance(P, slot, dI, dV, rd, M);
        gain = M[0];
        for (let t = 0; t < nd; t++) gain += dV[t] * M[dI[t]];
        diffuse = gain >= 1e4;
        for (let i = 0; i < rd; i++) {
          Mp[slot[i]] = M[i];
          Kp[slot[i]] = M[i] / gain;
        }
        if (chandra === 1) {
          // Pn moved by a low-rank increment since the last step: factor it and switch.
          exportLower(P, slot, rd, ch!.pn1);
          alpha = factorIncrement(ch!, rd);
          // Not of low rank yet (AR lags still being learnt): try again a little later.
          chandra = alpha > 0 ? 2 : ++attempts < CHANDRA_ATTEMPTS ? 0 : -1;
          if (alpha === 0) retryAt = l + CHANDRA_RETRY;
          if (chandra === 2) {
            // The factor is the previous step's increment: advance it one step (with the
            // previous M and gain) to the increment from this step to the next.
            chandrasekharStep(ch!, alpha, ch!.m0, gain0, T, dI, dV, rd);
            if (gain < 1e4) {
              nu++;
              ssq += (res * res) / gain;
              sumlog += Math.log(gain);
            }
            for (let i = 0; i < rd; i++) a[i] = anew[i] + (M[i] * res) / gain;
            gain = chandrasekharStep(ch!, alpha, M, gain, T, dI, dV, rd);
            continue;
          }
        } else if (chandra === 0 && !diffuse && retryAt < 0) {
          // Give the plain filter a chance to converge first (it is exact and then free).
          retryAt = l + rd;
        } else if (chandra === 0 && !diffuse && l >= retryAt) {
          exportLower(P, slot, rd, ch!.pn0);
          ch!.m0.set(M);
          gain0 = gain;
          chandra = 1;
        }
      }
      if (gain < 1e4) {
        nu++;
        ssq += (res * res) / gain;
        sumlog += Math.log(gain);
      }
      if (resid) resid[l] = res / Math.sqrt(gain);
      for (let i = 0; i < rd; i++) a[i] = anew[i] + (M[i] * res) / gain;
      if (!frozen) {
        // P = Pn - M M' / gain, over the stored triangle (slot order does not matter here).
        if (diffuse) {
          diffuseUpdate(P, Mp, gain, rd);
        } else {
          rankOneUpdate(P, Mp, Kp, rd);
          if (mayFreeze) {
            const phase = l % CHECK_EVERY;
            if (phase === CHECK_EVERY - 1) exportLower(P, slot, rd, snap);
            else if (phase === 0 && l > 0) {
              if (changeSinceSnapshot(P, slot, rd, snap, gain) <= STEADY_TOL) {
                if (++calm >= 2) frozen = true;
              } else {
                calm = 0;
              }
            }
          }
        }
      }
    } else {
      for (let i = 0; i < rd; i++) a[i] = anew[i];
      if (resid) resid[l] = NaN;
    }
  }
  if (fast) {
    // Only the likelihood was asked for: the covariance was not kept up to date.
    ss.P.fill(NaN);
    return { ssq, sumlog, nu };
  }
  // Hand the filtered covariance back in the model's full column-major state order.
  for (let i = 0; i < rd; i++) {
    for (let j = 0; j <= i; j++) {
      const si = slot[i];
      const sj = slot[j];
      const v = si >= sj ? P[si * rd + sj] : P[sj * rd + si];
      ss.P[i + rd * j] = v;
      ss.P[j + rd * i] = v;
    }
  }
  return { ssq, sumlog, nu };
}

/** M = Pn Z': the columns of states 0 and r + k of the (slot-stored) predicted covariance. */
function predictionCovariance(P: Float64Array, slot: Int32Array, dI: Int32Array, dV: Float64Array, rd: number, M: Float64Array): void {
  const nd = dI.length;
  const s0 = slot[0];
  for (let i = 0; i < rd; i++) {
    const si = slot[i];
    let tmp = si >= s0 ? P[si * rd + s0] : P[s0 * rd + si];
    for (let t = 0; t < nd; t++) {
      const c = slot[dI[t]];
      tmp += (si >= c ? P[si * rd + c] : P[c * rd + si]) * dV[t];
    }
    M[i] = tmp;
  }
}

/** P -= M K' over the stored lower triangle (unrolled: this is the filter's innermost loop). */
function rankOneUpdate(P: Float64Array, M: Float64Array, K: Float64Array, rd: number): void {
  for (let i = 0; i < rd; i++) {
    const mi = M[i];
    const row = i * rd;
    let j = 0;
    for (; j + 3 <= i; j += 4) {
      P[row + j] -= mi * K[j];
      P[row + j + 1] -= mi * K[j + 1];
      P[row + j + 2] -= mi * K[j + 2];
      P[row + j + 3] -= mi * K[j + 3];
    }
    for (; j <= i; j++) P[row + j] -= mi * K[j];
  }
}

/**
 * P -= M M' / gain while the differencing states are still diffuse: entries of size kappa
 * cancel, so round as (M_i M_j) / gain, the textbook order.
 */
function diffuseUpdate(P: Float64Array, M: Float64Array, gain: number, rd: number): void {
  for (let i = 0; i < rd; i++) {
    const mi = M[i];
    const row = i * rd;
    for (let j = 0; j <= i; j++) P[row + j] -= (mi * M[j]) / gain;
  }
}

/** P <- T P T' + R R' in place, computing only the states that are not a relabelled shift. */
function predictCovariance(
  P: Float64Array,
  mm: Float64Array,
  slot: Int32Array,
  next: Int32Array,
  used: Uint8Array,
  T: TransitionRows,
  fresh: Int32Array,
  Rv: Float64Array,
  rd: number,
): void {
  const { kind, src, start, cols, vals, general } = T;
  const ng = general.length;
  const nf = fresh.length;
  const q = Rv.length - 1;
  // Rows of T P (over slots) for the general rows, from the old covariance.
  for (let g = 0; g < ng; g++) {
    const i = general[g];
    const row = g * rd;
    for (let c = 0; c < rd; c++) mm[row + c] = 0;
    for (let e = start[i]; e < start[i + 1]; e++) {
      const v = vals[e];
      const k = slot[cols[e]];
      const rk = k * rd;
      for (let c = 0; c <= k; c++) mm[row + c] += v * P[rk + c];
      for (let c = k + 1; c < rd; c++) mm[row + c] += v * P[c * rd + k];
    }
  }
  // Relabel: a shifted state keeps its source's slot; freed slots go to the fresh states.
  used.fill(0);
  for (let i = 0; i < rd; i++) {
    if (kind[i] === 1) {
      const sl = slot[src[i]];
      next[i] = sl;
      used[sl] = 1;
    }
  }
  let freeSlot = 0;
  for (let f = 0; f < nf; f++) {
    while (used[freeSlot]) freeSlot++;
    next[fresh[f]] = freeSlot;
    used[freeSlot] = 1;
  }
  // Rows of the fresh states: general rows from T P, zero rows zero.
  let g = 0;
  for (let f = 0; f < nf; f++) {
    const i = fresh[f];
    const si = next[i];
    if (kind[i] === 0) {
      for (let c = 0; c <= si; c++) P[si * rd + c] = 0;
      for (let c = si + 1; c < rd; c++) P[c * rd + si] = 0;
      continue;
    }
    while (general[g] !== i) g++;
    const row = g * rd;
    for (let j = 0; j < rd; j++) {
      const kj = kind[j];
      if (kj === 0 || (kj === 2 && j > i)) continue; // zero, or written from row j's side
      let v = 0;
      if (kj === 1) v = mm[row + next[j]];
      else for (let e = start[j]; e < start[j + 1]; e++) v += vals[e] * mm[row + slot[cols[e]]];
      const sj = next[j];
      if (si >= sj) P[si * rd + sj] = v;
      else P[sj * rd + si] = v;
    }
  }
  slot.set(next);
  // + R R' on the states 0..q.
  for (let i = 0; i <= q; i++) {
    const si = slot[i];
    for (let j = 0; j <= i; j++) {
      const sj = slot[j];
      const v = Rv[i] * Rv[j];
      if (si >= sj) P[si * rd + sj] += v;
      else P[sj * rd + si] += v;
    }
  }
}

/** Lower triangle of P in state order. */
function exportLower(P: Float64Array, slot: Int32Array, rd: number, dst: Float64Array): void {
  for (let i = 0; i < rd; i++) {
    const si = slot[i];
    for (let j = 0; j <= i; j++) {
      const sj = slot[j];
      dst[i * rd + j] = si >= sj ? P[si * rd + sj] : P[sj * rd + si];
    }
  }
}

/**
 * Largest change of P since the snapshot, relative to the larger of its diagonal and the
 * gain (the predicted covariance is at least R R', gain >= 1: it sets the scale when P -> 0).
 */
function changeSinceSnapshot(P: Float64Array, slot: Int32Array, rd: number, snap: Float64Array, gain: number): number {
  let change = 0;
  let size = gain;
  for (let i = 0; i < rd; i++) {
    const si = slot[i];
    for (let j = 0; j <= i; j++) {
      const sj = slot[j];
      const v = si >= sj ? P[si * rd + sj] : P[sj * rd + si];
      const dv = Math.abs(v - snap[i * rd + j]);
      if (dv > change) change = dv;
      if (i === j && Math.abs(v) > size) size = Math.abs(v);
    }
  }
  return change / size;
}

/** h-step forecasts from the filtered state: means and variances in units of sigma^2. */
export function kalmanForecast(h: number, ss: ArimaStateSpace): { mean: Float64Array; variance: Float64Array } {
  const { phi, theta, delta, r, rd } = ss;
  const p = phi.length;
  const d = delta.length;
  const a = Float64Array.from(ss.a);
  const P = Float64Array.from(ss.P);
  const anew = new Float64Array(rd);
  const mm = new Float64Array(rd * rd);
  // Sparse rows of T: T[i, cols[k]] = vals[k] for k in start[i]..start[i+1].
  const start: number[] = [0];
  const cols: number[] = [];
  const vals: number[] = [];
  for (let i = 0; i < rd; i++) {
    if (i < r) {
      if (i < p && phi[i] !== 0) {
        cols.push(0);
        vals.push(phi[i]);
      }
      if (i < r - 1) {
        cols.push(i + 1);
        vals.push(1);
      }
    } else if (i === r) {
      cols.push(0);
      vals.push(1);
      for (let k = 0; k < d; k++) {
        if (delta[k] !== 0) {
          cols.push(r + k);
          vals.push(delta[k]);
        }
      }
    } else {
      cols.push(i - 1);
      vals.push(1);
    }
    start.push(cols.length);
  }
  // Observation vector Z = (1, 0, ..., 0, delta) and V = R R' with R = (1, theta, 0...).
  const Z = new Float64Array(rd);
  Z[0] = 1;
  for (let k = 0; k < d; k++) Z[r + k] = delta[k];
  const R = new Float64Array(rd);
  R[0] = 1;
  for (let k = 0; k < theta.length && k < r - 1; k++) R[k + 1] = theta[k];
  const mean = new Float64Array(h);
  const variance = new Float64Array(h);
  for (let l = 0; l < h; l++) {
    let fc = 0;
    for (let i = 0; i < rd; i++) {
      let tmp = 0;
      for (let k = start[i]; k < start[i + 1]; k++) tmp += vals[k] * a[cols[k]];
      anew[i] = tmp;
      fc += tmp * Z[i];
    }
    a.set(anew);
    mean[l] = fc;
    // mm = T P
    for (let j = 0; j < rd; j++) {
      const cj = rd * j;
      for (let i = 0; i < rd; i++) {
        let tmp = 0;
        for (let k = start[i]; k < start[i + 1]; k++) tmp += vals[k] * P[cols[k] + cj];
        mm[i + cj] = tmp;
      }
    }
    // P = V + mm T'
    for (let j = 0; j < rd; j++) {
      for (let i = 0; i < rd; i++) {
        let tmp = R[i] * R[j];
        for (let k = start[j]; k < start[j + 1]; k++) tmp += mm[i + rd * cols[k]] * vals[k];
        P[i + rd * j] = tmp;
      }
    }
    let v = 0;
    for (let i = 0; i < rd; i++) {
      if (Z[i] === 0) continue;
      for (let j = 0; j < rd; j++) v += Z[i] * Z[j] * P[i + j * rd];
    }
    variance[l] = v;
  }
  return { mean, variance };
}
