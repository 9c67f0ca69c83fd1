/**
 * CES's starting point, as statsforecast's `initstate` and `initparamces` set it: initial states
 * from the first observations (and, for P and F, the classical decomposition's seasonal figure),
 * and the optimiser's starting parameters and box. Means and the seasonal figure are summed as
 * numpy and statsmodels sum them, so the states agree with the reference's to the last bit but for
 * the moving average's BLAS dot products, whose order is not copied.
 */
import { COMPONENTS, stateMatrix, type CesParameters, type CesVariant, type StateMatrix } from './recursion.ts';

/** numpy's pairwise summation (`np.sum` of a contiguous float64 array), of a[start, start + n). */
export function pairwiseSum(a: ArrayLike<number>, start = 0, n = a.length - start): number {
  if (n < 8) {
    let res = -0.0;
    for (let i = 0; i < n; i++) res += a[start + i];
    return res;
  }
  if (n <= 128) {
    let r0 = a[start];
    let r1 = a[start + 1];
    let r2 = a[start + 2];
    let r3 = a[start + 3];
    let r4 = a[start + 4];
    let r5 = a[start + 5];
    let r6 = a[start + 6];
    let r7 = a[start + 7];
    let i = 8;
    for (; i < n - (n % 8); i += 8) {
      const o = start + i;
      r0 += a[o];
      r1 += a[o + 1];
      r2 += a[o + 2];
      r3 += a[o + 3];
      r4 += a[o + 4];
      r5 += a[o + 5];
      r6 += a[o + 6];
      r7 += a[o + 7];
    }
    let res = r0 + r1 + (r2 + r3) + (r4 + r5 + (r6 + r7));
    for (; i < n; i++) res += a[start + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, start, n2) + pairwiseSum(a, start + n2, n - n2);
}

const npMean = (a: ArrayLike<number>, start: number, n: number) => pairwiseSum(a, start, n) / n;

/**
 * The seasonal figure of statsmodels' additive `seasonal_decompose(y, period=m)`: a centred moving
 * average (2 x m for even m), the detrended series' mean at each cycle position (positions whose
 * trend is undefined add zeros to the sum, not to the count), centred to mean zero.
 */
export function seasonalFigure(y: Float64Array, m: number): Float64Array {
  const n = y.length;
  const filt = m % 2 === 0 ? new Float64Array(m + 1).fill(1 / m) : new Float64Array(m).fill(1.0 / m);
  if (m % 2 === 0) filt[0] = filt[m] = 0.5 / m;
  const width = filt.length;
  const head = Math.ceil(width / 2) - 1;
  const tail = Math.ceil(width / 2) - (width % 2);
  const detrended = new Float64Array(n);
  const defined = new Uint8Array(n);
  for (let t = head; t < n - tail; t++) {
    let trend = 0;
    for (let j = 0; j < width; j++) trend += y[t - head + j] * filt[width - 1 - j];
    detrended[t] = y[t] - trend;
    defined[t] = 1;
  }
  const figure = new Float64Array(m);
  const column = new Float64Array(Math.ceil(n / m));
  for (let i = 0; i < m; i++) {
    let len = 0;
    let count = 0;
    for (let t = i; t < n; t += m) {
      column[len++] = defined[t] ? detrended[t] : 0;
      count += defined[t];
    }
    figure[i] = pairwiseSum(column, 0, len) / count;
  }
  const centre = npMean(figure, 0, m);
  for (let i = 0; i < m; i++) figure[i] -= centre;
  return figure;
}

/**
 * `initstate`: the first m rows of an (n + 2m)-row state matrix. The imaginary parts start at the
 * real ones over 1.1, the reference's (and R smooth's) convention.
 */
export function initialStates(y: Float64Array, m: number, variant: CesVariant): StateMatrix {
  const n = y.length;
  const lags = variant === 'N' ? 1 : m;
  const s = stateMatrix(variant, lags, n + 2 * lags);
  const { values: v, k } = s;
  if (variant === 'N') {
    // The mean of the first ten observations (fewer if the series is shorter).
    const mean = npMean(y, 0, Math.min(10, n));
    v[0] = mean;
    v[1] = mean / 1.1;
    return s;
  }
  if (variant === 'S') {
    // One complex level per position in the first cycle.
    for (let i = 0; i < lags; i++) {
      v[i * k] = y[i];
      v[i * k + 1] = y[i] / 1.1;
    }
    return s;
  }
  const level = npMean(y, 0, lags);
  const figure = seasonalFigure(y, lags);
  for (let i = 0; i < lags; i++) {
    v[i * k] = level;
    v[i * k + 1] = level / 1.1;
    v[i * k + 2] = figure[i];
    if (variant === 'F') v[i * k + 3] = figure[i] / 1.1;
  }
  return s;
}

/** `initparamces`: where Nelder-Mead starts; betas the variant lacks stay NaN. */
export function startingParameters(variant: CesVariant): CesParameters {
  return {
    alpha0: 1.3,
    alpha1: 1.0,
    beta0: variant === 'P' ? 0.1 : variant === 'F' ? 1.3 : NaN,
    beta1: variant === 'F' ? 1.0 : NaN,
  };
}

/** How many parameters the variant fits: a0 and a1, plus b0 (P) or b0 and b1 (F). */
export const fittedCount = (variant: CesVariant) => COMPONENTS[variant];

/** The optimiser's box, in the order a0, a1, b0, b1 (the reference's bounds). */
export const LOWER = [0.01, 0.01, 0.01, 0.01];
export const UPPER = [1.8, 1.9, 1.5, 1.5];
