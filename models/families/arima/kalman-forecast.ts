import type { ArimaStateSpace } from './arima-state-space.ts';

/** Forecasting an ARIMA model from the state the Kalman filter (kalman.ts) leaves at the end of the data. */

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
