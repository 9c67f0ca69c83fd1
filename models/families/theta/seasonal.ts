/**
 * Theta's seasonal adjustment (Assimakopoulos and Nikolopoulos; R's `thetaf`, statsforecast's
 * AutoTheta): a 90% test on the autocorrelation at the seasonal lag decides whether to
 * deseasonalise, by classical multiplicative decomposition unless the series is not positive or
 * a seasonal index is tiny, where the additive one is used. Forecasts are reseasonalised with
 * the last cycle of indices.
 */
import { classicalSeasonal } from '../../numerics/classical-decomposition.ts';

/** The standard normal's 95th percentile: a one-sided test at 90% on |r_m|. */
const Z_95 = 1.6448536269514722;

export interface SeasonalAdjustment {
  kind: 'multiplicative' | 'additive';
  /** The seasonal index of every observation. */
  indices: Float64Array;
  /** The seasonal index of each horizon step (the last cycle, repeated). */
  ahead: (step: number) => number;
}

/** Sample autocorrelations r_1..r_maxLag (statsmodels' `acf` without adjustment). */
function autocorrelations(y: Float64Array, maxLag: number): Float64Array {
  const n = y.length;
  let mean = 0;
  for (const v of y) mean += v;
  mean /= n;
  let c0 = 0;
  for (const v of y) c0 += (v - mean) * (v - mean);
  const r = new Float64Array(maxLag);
  for (let k = 1; k <= maxLag; k++) {
    let c = 0;
    for (let t = 0; t + k < n; t++) c += (y[t] - mean) * (y[t + k] - mean);
    r[k - 1] = c / c0;
  }
  return r;
}

/** Whether the series is seasonal with period m: needs m >= 4 and two full cycles. */
export function isSeasonal(y: Float64Array, m: number): boolean {
  if (m < 4 || y.length < 2 * m) return false;
  const r = autocorrelations(y, m);
  let squares = 0;
  for (let k = 0; k < m - 1; k++) squares += r[k] * r[k];
  const stat = Math.sqrt((1 + 2 * squares) / y.length);
  // A constant series has no autocorrelation (0/0): not seasonal.
  return Math.abs(r[m - 1]) / stat > Z_95;
}

export function seasonalAdjustment(y: Float64Array, m: number): SeasonalAdjustment | null {
  if (!isSeasonal(y, m)) return null;
  let kind: SeasonalAdjustment['kind'] = y.every((v) => v > 0) ? 'multiplicative' : 'additive';
  let indices = classicalSeasonal(y, m, kind === 'multiplicative');
  if (kind === 'multiplicative' && indices.some((s) => s < 0.01)) {
    kind = 'additive';
    indices = classicalSeasonal(y, m, false);
  }
  const n = y.length;
  const lastCycle = indices.subarray(n - m);
  return { kind, indices, ahead: (step) => lastCycle[step % m] };
}

export function deseasonalise(y: Float64Array, adj: SeasonalAdjustment): Float64Array {
  return y.map((v, t) => (adj.kind === 'multiplicative' ? v / adj.indices[t] : v - adj.indices[t]));
}

/** Puts the season back on horizon values (means, quantiles or simulated paths), in place. */
export function reseasonalise(values: Float64Array, adj: SeasonalAdjustment): Float64Array {
  for (let j = 0; j < values.length; j++) values[j] = adj.kind === 'multiplicative' ? values[j] * adj.ahead(j) : values[j] + adj.ahead(j);
  return values;
}
