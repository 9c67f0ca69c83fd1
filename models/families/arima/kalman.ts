/**
 * Exact Gaussian likelihood of an ARIMA model by the Kalman filter over its state-space form
 * (arima-state-space.ts), as R's arima() computes it: observations whose prediction variance is
 * still >= 1e4 (the diffuse start of the differencing states) are left out. `kalmanReplay` filters
 * other data through a recorded run's gains (they depend on the model, not the data), to the same
 * rounding.
 */

import { CHANDRA_ATTEMPTS, CHANDRA_RETRY, chandraScratch, chandrasekharStep, factorIncrement } from './chandrasekhar.ts';
import { diffuseUpdate, exportLower, predictCovariance, predictionCovariance, rankOneUpdate, settled } from './slot-covariance.ts';
import { emptyTransitionRows, transitionRows, type ArimaStateSpace, type TransitionRows } from './arima-state-space.ts';

/** Sufficient statistics of the filtered likelihood. */
export interface LikelihoodSums {
  /** Sum of squared standardised innovations. */
  ssq: number;
  /** Sum of log prediction variances. */
  sumlog: number;
  /** Number of observations that entered the likelihood. */
  nu: number;
}

export interface FilterOptions {
  /**
   * Only the likelihood sums are needed (ss.P is left undefined): once the differencing states
   * are no longer diffuse, the covariance moves by a low-rank increment each step, and the
   * Chandrasekhar recursions follow that increment instead of the whole covariance.
   */
  readonly sumsOnly?: boolean;
  /** Keeps each step's gain and M, for kalmanReplay to filter other data through the same model. */
  readonly record?: GainRecord;
}

/**
 * The gain and M = Pn Z' of each step of one filter run. They depend on the model only (and on
 * which observations are missing), not on the observed values, so another series (the same data
 * less other regression coefficients) runs through the same model by the state recursion alone.
 */
export interface GainRecord {
  gain: Float64Array;
  M: Float64Array;
}

export function gainRecord(): GainRecord {
  return { gain: new Float64Array(0), M: new Float64Array(0) };
}

function prepareRecord(rec: GainRecord, n: number, rd: number): void {
  if (rec.gain.length !== n) rec.gain = new Float64Array(n);
  if (rec.M.length !== n * rd) rec.M = new Float64Array(n * rd);
}

// Reusable scratch for the filter.
let scratch: {
  rd: number;
  P: Float64Array;
  mm: Float64Array;
  snap: Float64Array;
  snapSlot: Int32Array;
  anew: Float64Array;
  M: Float64Array;
  Mp: Float64Array;
  Kp: Float64Array;
  slot: Int32Array;
  next: Int32Array;
  T: TransitionRows;
} | null = null;

function filterScratch(rd: number) {
  if (!scratch || scratch.rd !== rd) {
    scratch = {
      rd,
      P: new Float64Array(rd * rd),
      mm: new Float64Array(rd * rd),
      snap: new Float64Array(rd * rd),
      snapSlot: new Int32Array(rd),
      anew: new Float64Array(rd),
      M: new Float64Array(rd),
      Mp: new Float64Array(rd),
      Kp: new Float64Array(rd),
      slot: new Int32Array(rd),
      next: new Int32Array(rd),
      T: emptyTransitionRows(rd),
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

/** differenceTerms of the last delta asked for. */
let lastTerms: { delta: Float64Array; r: number; dI: Int32Array; dV: Float64Array } | null = null;

/** The non-zero coefficients of the differencing polynomial, with the state slots they multiply. */
function differenceTerms(delta: Float64Array, r: number): { dI: Int32Array; dV: Float64Array } {
  // An optimiser filters one state space (one delta, never changed) thousands of times in a row.
  if (lastTerms && lastTerms.delta === delta && lastTerms.r === r) return lastTerms;
  const dIdx: number[] = [];
  for (let k = 0; k < delta.length; k++) if (delta[k] !== 0) dIdx.push(k);
  lastTerms = { delta, r, dI: Int32Array.from(dIdx, (k) => r + k), dV: Float64Array.from(dIdx, (k) => delta[k]) };
  return lastTerms;
}

/** The predicted state anew = T a, in state order: the ARMA part, then the differencing part. */
function predictState(
  a: Float64Array,
  anew: Float64Array,
  phi: ArrayLike<number>,
  r: number,
  rd: number,
  differenced: boolean,
  dI: Int32Array,
  dV: Float64Array,
): void {
  const p = phi.length;
  for (let i = 0; i < r; i++) {
    let tmp = i < r - 1 ? a[i + 1] : 0;
    if (i < p) tmp += phi[i] * a[0];
    anew[i] = tmp;
  }
  if (differenced) {
    for (let i = r + 1; i < rd; i++) anew[i] = a[i - 1];
    let tmp = a[0];
    for (let t = 0; t < dI.length; t++) tmp += dV[t] * a[dI[t]];
    anew[r] = tmp;
  }
}

/**
 * The likelihood sums of `y` (NaN = missing) by the Kalman filter, updating ss.a and ss.P in
 * place so that they hold the filtered state at the end (ss.Pn keeps the initial covariance).
 * Writes standardised innovations into resid if given.
 *
 * Most rows of the transition matrix T shift the state by one place, so most of T P T' is P
 * itself with relabelled states. The covariance is therefore stored by physical slots with a
 * state -> slot map (slot-covariance.ts): a shift only relabels slots, and only the few rows
 * holding AR or differencing coefficients (and the new ARMA state) are computed each step. Only
 * the lower triangle is stored. Once the filtered covariance stops changing (steady state) only
 * the state mean is updated; when only the likelihood is wanted, the filter switches to the
 * Chandrasekhar recursions (chandrasekhar.ts). It can record its gains for kalmanReplay.
 */
export function kalmanLikelihood(y: ArrayLike<number>, ss: ArimaStateSpace, resid?: Float64Array, opts: FilterOptions = {}): LikelihoodSums {
  const n = y.length;
  const fast = opts.sumsOnly === true && resid === undefined;
  const { phi, theta, delta, r, rd, a } = ss;
  const d = delta.length;
  const sc = filterScratch(rd);
  const { P, mm, snap, snapSlot, anew, M, Mp, Kp, slot, next } = sc;
  const T = transitionRows(phi, theta, delta, r, rd, sc.T);
  const { dI, dV } = differenceTerms(delta, r);
  const nd = dI.length;

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
  const rec = opts.record;
  if (rec) prepareRecord(rec, n, rd);

  let ssq = 0;
  let sumlog = 0;
  let nu = 0;
  for (let l = 0; l < n; l++) {
    // Predicted state anew = T a (in state order).
    predictState(a, anew, phi, r, rd, d > 0, dI, dV);
    if (l > 0 && !frozen && chandra !== 2) predictCovariance(P, mm, slot, next, T, rd);
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
        if (rec) keep(rec, l, gain, M, rd);
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
            if (rec) keep(rec, l, gain, M, rd);
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
      if (rec) keep(rec, l, gain, M, rd);
      if (!frozen) {
        // P = Pn - M M' / gain, over the stored triangle (slot order does not matter here).
        if (diffuse) {
          diffuseUpdate(P, Mp, gain, rd);
        } else {
          rankOneUpdate(P, Mp, Kp, rd);
          if (mayFreeze) {
            const phase = l % CHECK_EVERY;
            if (phase === CHECK_EVERY - 1) {
              snap.set(P);
              snapSlot.set(slot);
            } else if (phase === 0 && l > 0) {
              if (settled(P, slot, snap, snapSlot, rd, gain, STEADY_TOL)) {
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

function keep(rec: GainRecord, l: number, gain: number, M: Float64Array, rd: number): void {
  rec.gain[l] = gain;
  rec.M.set(M, l * rd);
}

/**
 * The likelihood of y through the model of a recorded run (kalmanLikelihood with `record`, on
 * data with the same missing values): the state recursion with the recorded gains, the same
 * arithmetic as the run itself. Leaves ss.a filtered; ss.P is not touched.
 */
export function kalmanReplay(y: ArrayLike<number>, ss: ArimaStateSpace, rec: GainRecord): LikelihoodSums {
  const n = y.length;
  const { phi, delta, r, rd, a } = ss;
  const d = delta.length;
  const { anew } = filterScratch(rd);
  const { dI, dV } = differenceTerms(delta, r);
  const nd = dI.length;
  const { gain: gains, M } = rec;
  let ssq = 0;
  let sumlog = 0;
  let nu = 0;
  for (let l = 0; l < n; l++) {
    predictState(a, anew, phi, r, rd, d > 0, dI, dV);
    const yl = y[l];
    if (!Number.isNaN(yl)) {
      let res = yl - anew[0];
      for (let t = 0; t < nd; t++) res -= dV[t] * anew[dI[t]];
      const gain = gains[l];
      if (gain < 1e4) {
        nu++;
        ssq += (res * res) / gain;
        sumlog += Math.log(gain);
      }
      const row = l * rd;
      for (let i = 0; i < rd; i++) a[i] = anew[i] + (M[row + i] * res) / gain;
    } else {
      for (let i = 0; i < rd; i++) a[i] = anew[i];
    }
  }
  return { ssq, sumlog, nu };
}
