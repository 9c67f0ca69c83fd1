/**
 * M4 competition scores (Makridakis, Spiliotis, Assimakopoulos, IJF 36(1), 2020), as in the
 * competition's own code:
 *
 *   sMAPE = 200/h * sum_t |y_t - f_t| / (|y_t| + |f_t|)                      (in %)
 *   MASE  = (1/h * sum_t |y_t - f_t|) / (1/(n-m) * sum_{i=m+1..n} |x_i - x_{i-m}|)
 *
 * where x_1..x_n is the in-sample (train) series and m the set's seasonal period (its `freq`).
 * When the train series is not longer than m there is no seasonal difference to scale by, and
 * the lag falls back to 1 (the non-seasonal naive error).
 */

/** Symmetric MAPE of one series, in percent. A step where |y| + |f| = 0 counts as zero error. */
export function smape(actual: ArrayLike<number>, forecast: ArrayLike<number>): number {
  const h = actual.length;
  if (h === 0) throw new RangeError('smape needs at least one step');
  if (forecast.length !== h) throw new RangeError(`smape: ${h} actuals but ${forecast.length} forecasts`);
  let s = 0;
  for (let t = 0; t < h; t++) {
    const den = Math.abs(actual[t]) + Math.abs(forecast[t]);
    if (den > 0) s += Math.abs(actual[t] - forecast[t]) / den;
  }
  return (200 * s) / h;
}

/** The lag MASE scales by: m, or 1 when the history has no pair of points m apart. */
export function maseLag(trainLength: number, seasonLength: number): number {
  return trainLength > seasonLength ? seasonLength : 1;
}

/** In-sample mean absolute error of the seasonal naive forecast at the MASE lag. */
export function maseScale(train: ArrayLike<number>, seasonLength: number): number {
  const n = train.length;
  const lag = maseLag(n, seasonLength);
  if (n <= lag) throw new RangeError(`maseScale needs more than ${lag} observations; got ${n}`);
  let s = 0;
  for (let i = lag; i < n; i++) s += Math.abs(train[i] - train[i - lag]);
  return s / (n - lag);
}

/**
 * MASE of one series. Returns null when the scale is zero (a train series constant at the lag),
 * where the ratio is undefined; callers leave such series out of the mean and say so.
 */
export function mase(train: ArrayLike<number>, actual: ArrayLike<number>, forecast: ArrayLike<number>, seasonLength: number): number | null {
  const h = actual.length;
  if (h === 0) throw new RangeError('mase needs at least one step');
  if (forecast.length !== h) throw new RangeError(`mase: ${h} actuals but ${forecast.length} forecasts`);
  const scale = maseScale(train, seasonLength);
  if (!(scale > 0)) return null;
  let s = 0;
  for (let t = 0; t < h; t++) s += Math.abs(actual[t] - forecast[t]);
  return s / h / scale;
}
