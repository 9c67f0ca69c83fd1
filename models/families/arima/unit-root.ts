/**
 * How many differences auto.arima takes: d from repeated KPSS tests (Kwiatkowski, Phillips,
 * Schmidt & Shin 1992) at the 5% level, D from the STL seasonal strength (Wang, Smith &
 * Hyndman 2006) against 0.64, the defaults of forecast::ndiffs / nsdiffs.
 */
import { stl } from '../../numerics/stl.ts';

/**
 * R's is.constant: all.equal(x, rep(x[1], n)), i.e. the mean absolute difference to x[1] over
 * the differing entries, relative to their mean absolute value, is at most 1.5e-8.
 */
export function isConstant(x: ArrayLike<number>): boolean {
  const n = x.length;
  if (n === 0) return true;
  const x0 = x[0];
  let count = 0;
  let sumAbs = 0;
  let sumDiff = 0;
  for (let i = 0; i < n; i++) {
    const v = x[i];
    if (v === x0) continue;
    count++;
    sumAbs += Math.abs(v);
    sumDiff += Math.abs(v - x0);
  }
  if (count === 0) return true;
  const tol = Math.sqrt(Number.EPSILON);
  let scale = sumAbs / count;
  if (!(Number.isFinite(scale) && scale > tol)) scale = 1;
  const err = sumDiff / (count * scale);
  return !(Number.isNaN(err) || err > tol);
}

/** KPSS level-stationarity statistic with Bartlett-weighted long-run variance over `lags` lags. */
export function kpssStatistic(x: ArrayLike<number>, lags: number): number {
  const n = x.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += x[i];
  mean /= n;
  const e = new Float64Array(n);
  for (let i = 0; i < n; i++) e[i] = x[i] - mean;
  let s = 0;
  let sumS2 = 0;
  let sumE2 = 0;
  for (let i = 0; i < n; i++) {
    s += e[i];
    sumS2 += s * s;
    sumE2 += e[i] * e[i];
  }
  const eta = sumS2 / (n * n);
  let lrv = sumE2 / n;
  if (lags > 0) {
    let acc = 0;
    for (let k = 1; k <= lags; k++) {
      let c = 0;
      for (let t = k; t < n; t++) c += e[t] * e[t - k];
      acc += (1 - k / (lags + 1)) * c;
    }
    lrv += (2 / n) * acc;
  }
  return eta / lrv;
}

/** 5% critical value of the level KPSS test (Kwiatkowski et al. 1992, table 1). */
const KPSS_CRIT_5PCT = 0.463;

function kpssRejects(x: ArrayLike<number>): boolean | null {
  const lags = Math.trunc((3 * Math.sqrt(x.length)) / 13);
  const stat = kpssStatistic(x, lags);
  if (Number.isNaN(stat)) return null;
  // The interpolated p-value is below 0.05 exactly when the statistic exceeds the 5% value.
  return stat > KPSS_CRIT_5PCT;
}

function diff(x: ArrayLike<number>, lag: number): Float64Array {
  const out = new Float64Array(Math.max(0, x.length - lag));
  for (let i = 0; i < out.length; i++) out[i] = x[i + lag] - x[i];
  return out;
}

/** Number of first differences (0..maxD) needed for the KPSS test to accept level stationarity. */
export function ndiffs(x: ArrayLike<number>, maxD = 2): number {
  let d = 0;
  if (isConstant(x)) return d;
  let cur: ArrayLike<number> = x;
  let doDiff = kpssRejects(cur);
  if (doDiff === null) return d;
  while (doDiff && d < maxD) {
    d++;
    cur = diff(cur, 1);
    if (isConstant(cur)) return d;
    doDiff = kpssRejects(cur);
    if (doDiff === null) return d - 1;
  }
  return d;
}

/** Strength of seasonality 1 - var(remainder) / var(remainder + seasonal), clipped to [0, 1]. */
export function seasonalStrength(x: ArrayLike<number>, m: number): number {
  const { seasonal, remainder } = stl(x, m, { seasonalWindow: 11, defaults: 'r' });
  const n = x.length;
  const variance = (v: (i: number) => number) => {
    let mean = 0;
    for (let i = 0; i < n; i++) mean += v(i);
    mean /= n;
    let s = 0;
    for (let i = 0; i < n; i++) {
      const e = v(i) - mean;
      s += e * e;
    }
    return s / (n - 1);
  };
  const vare = variance((i) => remainder[i]);
  const vard = variance((i) => remainder[i] + seasonal[i]);
  return Math.max(0, Math.min(1, 1 - vare / vard));
}

/** Number of seasonal differences (0..maxD): one when the seasonal strength exceeds 0.64. */
export function nsdiffs(x: ArrayLike<number>, m: number, maxD = 1): number {
  let D = 0;
  if (isConstant(x)) return D;
  if (m <= 1 || m >= x.length) return 0;
  const test = (v: ArrayLike<number>): boolean => {
    try {
      return seasonalStrength(v, m) > 0.64;
    } catch {
      // R warns and keeps the differences taken so far when the test itself fails.
      return false;
    }
  };
  let doDiff = test(x);
  let cur: ArrayLike<number> = x;
  while (doDiff && D < maxD) {
    D++;
    cur = diff(cur, m);
    if (isConstant(cur)) return D;
    doDiff = cur.length >= 2 * m && D < maxD ? test(cur) : false;
  }
  return D;
}
