/**
 * Classical seasonal decomposition, shared by the model families that deseasonalise with it
 * (ETS's initial states, Theta's seasonal adjustment): R's `decompose` and statsmodels'
 * `seasonal_decompose` compute the same thing.
 */

/**
 * Classical decomposition (R's `decompose`): centred moving average of order m (2 x m for even
 * m), seasonal figure = mean detrended value per position in the cycle, normalised to sum 0
 * (additive) or average 1 (multiplicative). Returns the seasonal component for every time.
 */
export function classicalSeasonal(y: Float64Array, m: number, multiplicative: boolean): Float64Array {
  const n = y.length;
  const weights = m % 2 === 0 ? new Float64Array(m + 1).fill(1 / m) : new Float64Array(m).fill(1 / m);
  if (m % 2 === 0) {
    weights[0] = 0.5 / m;
    weights[m] = 0.5 / m;
  }
  const half = (weights.length - 1) / 2;
  const sums = new Float64Array(m);
  const counts = new Float64Array(m);
  for (let t = half; t < n - half; t++) {
    let trend = 0;
    for (let j = 0; j < weights.length; j++) trend += weights[j] * y[t + half - j];
    const detrended = multiplicative ? y[t] / trend : y[t] - trend;
    if (Number.isNaN(detrended)) continue;
    sums[t % m] += detrended;
    counts[t % m]++;
  }
  const figure = new Float64Array(m);
  let total = 0;
  for (let k = 0; k < m; k++) {
    figure[k] = sums[k] / counts[k];
    total += figure[k];
  }
  const mean = total / m;
  for (let k = 0; k < m; k++) figure[k] = multiplicative ? figure[k] / mean : figure[k] - mean;
  const seasonal = new Float64Array(n);
  for (let t = 0; t < n; t++) seasonal[t] = figure[t % m];
  return seasonal;
}
