/**
 * The ETS innovations state-space recursion (Hyndman, Koehler, Ord & Snyder 2008, ch. 2) and its
 * concentrated Gaussian likelihood: the inner loop of estimation, so it allocates nothing and keeps
 * the seasonal states in a ring buffer. Arithmetic follows R forecast's `etscalc` operation by
 * operation (same expressions, order and guards), so that the optimiser sees the same surface.
 */
import * as kinds from './ets-types.ts';

// Module-local copies: imported bindings can compile to getter calls, which the hot loop must not pay.
const NONE: number = kinds.NONE;
const ADDITIVE: number = kinds.ADDITIVE;
const MULTIPLICATIVE: number = kinds.MULTIPLICATIVE;

/** Divisions by a state smaller than this are replaced by HUGE, as R does. */
const TINY = 1e-10;
const HUGE = 1e10;

/** Model structure plus smoothing parameters, in the flat form the recursion reads. */
export interface Recursion {
  error: number;
  trend: number;
  season: number;
  /** Seasonal period of the recursion (1 when there is no seasonal component). */
  m: number;
  alpha: number;
  beta: number;
  gamma: number;
  /** 1 when undamped. */
  phi: number;
}

/**
 * Scratch space reused across likelihood evaluations of one series.
 * `seasons` is a ring buffer; `seasons[k]` starts as the seasonal index applying to observation k.
 */
export class Workspace {
  readonly seasons: Float64Array;
  /** Sum of squared innovations from the last pass (residual variance needs it). */
  sse = 0;
  /** Ring position after the last pass: where the next observation's seasonal index sits. */
  ringPos = 0;
  level = 0;
  slope = 0;

  constructor(m: number) {
    this.seasons = new Float64Array(Math.max(1, m));
  }
}

/**
 * Runs the recursion over `y` from (level0, slope0, ws.seasons) and returns R's `lik`:
 * n log(SSE) for additive errors, plus 2 sum log|one-step forecast| for multiplicative ones
 * (i.e. -2 log-likelihood up to a constant, with sigma concentrated out).
 * Leaves the final states in `ws` (level, slope, seasons + ringPos) and the SSE in `ws.sse`.
 */
export function runRecursion(y: Float64Array, r: Recursion, level0: number, slope0: number, ws: Workspace): number {
  const n = y.length;
  const { error, trend, season, m, alpha, beta, gamma, phi } = r;
  const seasons = ws.seasons;
  const betaOverAlpha = beta / alpha;
  let l = level0;
  let b = trend === NONE ? 0 : slope0;
  let pos = 0;
  let sse = 0;
  let sumLogF = 0;
  for (let i = 0; i < n; i++) {
    const yi = y[i];
    const s = season === NONE ? 0 : seasons[pos];
    // Level-and-trend part of the one-step forecast; the update reuses it.
    let phib = 0;
    let q = l;
    if (trend !== NONE) {
      phib = phi * b;
      q = l + phib;
    }
    let f = q;
    if (season === ADDITIVE) f = q + s;
    else if (season === MULTIPLICATIVE) f = q * s;

    const e = error === ADDITIVE ? yi - f : (yi - f) / f;
    sse += e * e;
    if (error === MULTIPLICATIVE) sumLogF += Math.log(Math.abs(f));

    let deseasonalised = yi;
    if (season === ADDITIVE) deseasonalised = yi - s;
    else if (season === MULTIPLICATIVE) deseasonalised = Math.abs(s) < TINY ? HUGE : yi / s;
    const newLevel = q + alpha * (deseasonalised - q);

    if (trend !== NONE) b = phib + betaOverAlpha * (newLevel - l - phib);

    if (season !== NONE) {
      let detrended: number;
      if (season === ADDITIVE) detrended = yi - q;
      else detrended = Math.abs(q) < TINY ? HUGE : yi / q;
      seasons[pos] = s + gamma * (detrended - s);
      pos = pos + 1 === m ? 0 : pos + 1;
    }
    l = newLevel;
  }
  ws.sse = sse;
  ws.level = l;
  ws.slope = b;
  ws.ringPos = pos;
  let lik = n * Math.log(sse);
  if (error === MULTIPLICATIVE) lik += 2 * sumLogF;
  return lik;
}

/** The states after the last pass in R's layout `[l, b?, s1..sm]` (s1 most recent). */
export function finalState(ws: Workspace, r: Recursion): Float64Array {
  const hasTrend = r.trend !== NONE;
  const m = r.season === NONE ? 0 : r.m;
  const out = new Float64Array(1 + (hasTrend ? 1 : 0) + m);
  out[0] = ws.level;
  if (hasTrend) out[1] = ws.slope;
  const off = hasTrend ? 2 : 1;
  for (let j = 0; j < m; j++) {
    // The newest index sits just before the ring position.
    let k = ws.ringPos - 1 - j;
    while (k < 0) k += m;
    out[off + j] = ws.seasons[k];
  }
  return out;
}

/**
 * Takes a fitted model's states (R's layout, from `finalState`) through further observations with
 * its parameters unchanged, and returns the states after them: what a backtest between refits
 * does with new data.
 */
export function advanceState(state: Float64Array, y: Float64Array, r: Recursion): Float64Array {
  const hasTrend = r.trend !== NONE;
  const m = r.season === NONE ? 1 : r.m;
  const ws = new Workspace(m);
  if (r.season !== NONE) {
    // The ring starts at the index of the next observation: the oldest of [s1..sm], i.e. sm.
    const off = hasTrend ? 2 : 1;
    for (let k = 0; k < m; k++) ws.seasons[k] = state[off + m - 1 - k];
  }
  runRecursion(y, r, state[0], hasTrend ? state[1] : 0, ws);
  return finalState(ws, r);
}
