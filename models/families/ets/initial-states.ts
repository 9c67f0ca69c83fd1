/**
 * R's `initstate` heuristic: starting values for the level, slope and seasonal indices, which
 * Nelder-Mead then refines with the smoothing parameters. Seasonal indices come from a classical
 * decomposition given three seasons of data, else from a linear trend + first Fourier pair
 * regression; level and slope from the first max(10, 2m) seasonally adjusted observations.
 */
import { classicalSeasonal } from '../../numerics/classical-decomposition.ts';
import { leastSquares } from './least-squares.ts';
import { ADDITIVE, MULTIPLICATIVE, NONE, type SeasonKind, type TrendKind } from './ets-types.ts';

/** sin(pi x) and cos(pi x) exact at multiples of 1/2, as R's sinpi/cospi used by `fourier()`. */
function sinpi(x: number): number {
  let r = x % 2;
  if (r <= -1) r += 2;
  else if (r > 1) r -= 2;
  if (r === 0 || r === 1) return 0;
  if (r === 0.5) return 1;
  if (r === -0.5) return -1;
  return Math.sin(Math.PI * r);
}

function cospi(x: number): number {
  let r = Math.abs(x) % 2;
  if (r === 0.5 || r === 1.5) return 0;
  if (r === 1) return -1;
  if (r === 0) return 1;
  return Math.cos(Math.PI * r);
}

/** Detrended series from y ~ 1 + t + sin(2 pi t/m) + cos(2 pi t/m), t = 1..n (R's short-series path). */
function regressionSeasonal(y: Float64Array, m: number, multiplicative: boolean): Float64Array {
  const n = y.length;
  const ones = new Float64Array(n).fill(1);
  const time = new Float64Array(n);
  const sin = new Float64Array(n);
  const cos = new Float64Array(n);
  for (let t = 1; t <= n; t++) {
    time[t - 1] = t;
    sin[t - 1] = sinpi((2 * t) / m);
    cos[t - 1] = cospi((2 * t) / m);
  }
  // With m = 2 the sine term is identically zero and R's fourier() drops it.
  const columns = m === 2 ? [ones, time, cos] : [ones, time, sin, cos];
  const coef = leastSquares(columns, y);
  const out = new Float64Array(n);
  for (let t = 1; t <= n; t++) {
    const trend = coef[0] + coef[1] * t;
    out[t - 1] = multiplicative ? y[t - 1] / trend : y[t - 1] - trend;
  }
  return out;
}

/**
 * Initial state in R's parameter order `[l0, b0?, s0..s(m-2)]` (s0 = the index one step before
 * the first observation's; the last index is implied by the normalisation). Null where R's
 * heuristic itself stops (seasonal states from fewer than 4 observations): the candidate cannot
 * be fitted.
 */
export function initialState(y: Float64Array, trend: TrendKind, season: SeasonKind, m: number): Float64Array | null {
  const n = y.length;
  let adjusted = y;
  let seeds: Float64Array | null = null;
  let period = 1;
  if (season !== NONE) {
    period = m;
    if (n < 4) return null;
    const multiplicative = season === MULTIPLICATIVE;
    const seasonal = n < 3 * m ? regressionSeasonal(y, m, multiplicative) : classicalSeasonal(y, m, multiplicative);
    seeds = new Float64Array(m - 1);
    for (let k = 0; k < m - 1; k++) seeds[k] = seasonal[m - 1 - k];
    adjusted = new Float64Array(n);
    if (season === ADDITIVE) {
      for (let t = 0; t < n; t++) adjusted[t] = y[t] - seasonal[t];
    } else {
      let sum = 0;
      for (let k = 0; k < m - 1; k++) {
        seeds[k] = Math.max(seeds[k], 0.01);
        sum += seeds[k];
      }
      if (sum > m) {
        let denom = 0;
        for (let k = 0; k < m - 1; k++) denom += seeds[k] + 0.01;
        for (let k = 0; k < m - 1; k++) seeds[k] /= denom;
      }
      for (let t = 0; t < n; t++) adjusted[t] = y[t] / Math.max(seasonal[t], 0.01);
    }
  }

  const maxn = Math.min(Math.max(10, 2 * period), n);
  const out = new Float64Array(1 + (trend === NONE ? 0 : 1) + (seeds ? seeds.length : 0));
  if (trend === NONE) {
    let s = 0;
    for (let t = 0; t < maxn; t++) s += adjusted[t];
    out[0] = s / maxn;
  } else {
    // Straight line through the first maxn adjusted values, time = 1..maxn.
    const tMean = (maxn + 1) / 2;
    let yMean = 0;
    for (let t = 0; t < maxn; t++) yMean += adjusted[t];
    yMean /= maxn;
    let sxy = 0;
    let sxx = 0;
    for (let t = 0; t < maxn; t++) {
      const dx = t + 1 - tMean;
      sxy += dx * (adjusted[t] - yMean);
      sxx += dx * dx;
    }
    let b0 = sxx > 0 ? sxy / sxx : 0;
    let l0 = yMean - b0 * tMean;
    // R nudges a level+slope of exactly zero so the first forecast is not degenerate.
    if (Math.abs(l0 + b0) < 1e-8) {
      l0 *= 1 + 0.001;
      b0 *= 1 - 0.001;
    }
    out[0] = l0;
    out[1] = b0;
  }
  if (seeds) out.set(seeds, trend === NONE ? 1 : 2);
  return out;
}
