import { congruence, leastSquares, symmetricEigenvectors } from '../../numerics/linalg.ts';
import type { ArmaOrders } from './transform.ts';

/**
 * Regression with ARIMA errors, as stats::arima sets it up: y_t - x_t' beta follows the ARIMA
 * model. Before the optimisation the regressors may be rotated onto their principal axes (so the
 * optimiser sees roughly uncorrelated coefficients) and the coefficients get their starting values
 * and scales from least squares on the differenced data; after it, the estimates are rotated back.
 */

/** x - X beta over the regression columns (or a copy of x). */
export function removeRegression(x: Float64Array, cols: readonly Float64Array[], beta: ArrayLike<number>, offset: number, out: Float64Array): void {
  const n = x.length;
  if (cols.length === 0) {
    out.set(x);
    return;
  }
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < cols.length; j++) s += cols[j][i] * beta[offset + j];
    out[i] = x[i] - s;
  }
}

export interface RegressionStart {
  /** The columns the optimiser works with: the regressors, rotated when that helps. */
  readonly cols: Float64Array[];
  /** The rotation (row-major, one row per regressor), or null when the regressors are kept. */
  readonly rotation: Float64Array | null;
  /** Starting values of the (rotated) coefficients, and their scales for the optimiser. */
  readonly coef: Float64Array;
  readonly scale: Float64Array;
  /** Complete observations (no missing value in the series or a regressor). */
  readonly complete: number;
}

/**
 * Starting values for the regression coefficients. `anyFixed`: some regression coefficient is
 * fixed, so the regressors keep their own axes (as they do when there is only one).
 */
export function startRegression(x: Float64Array, original: Float64Array[], o: ArmaOrders, anyFixed: boolean): RegressionStart {
  const n = x.length;
  const ncxreg = original.length;
  let cols = original;
  let rotation: Float64Array | null = null;
  if (!(ncxreg === 1 || anyFixed)) {
    // Rotate the regressors onto their principal axes (right singular vectors) so the
    // optimiser sees roughly uncorrelated coefficients.
    const XtX = new Float64Array(ncxreg * ncxreg);
    for (let a = 0; a < ncxreg; a++)
      for (let b = 0; b < ncxreg; b++) {
        let s = 0;
        for (let i = 0; i < n; i++) if (!cols.some((c) => Number.isNaN(c[i]))) s += cols[a][i] * cols[b][i];
        XtX[a * ncxreg + b] = s;
      }
    rotation = symmetricEigenvectors(XtX, ncxreg);
    const rotated = cols.map(() => new Float64Array(n));
    for (let i = 0; i < n; i++)
      for (let c = 0; c < ncxreg; c++) {
        let s = 0;
        for (let k = 0; k < ncxreg; k++) s += cols[k][i] * rotation[k * ncxreg + c];
        rotated[c][i] = s;
      }
    cols = rotated;
  }
  let dx: Float64Array = x;
  let dcols: Float64Array[] = cols;
  if (o.d > 0) {
    dx = diffSeries(dx, 1, o.d);
    dcols = dcols.map((c) => diffSeries(c, 1, o.d));
  }
  if (o.m > 1 && o.D > 0) {
    dx = diffSeries(dx, o.m, o.D);
    dcols = dcols.map((c) => diffSeries(c, o.m, o.D));
  }
  const flat = (cs: Float64Array[], len: number) => {
    const out = new Float64Array(len * cs.length);
    cs.forEach((c, j) => out.set(c, j * len));
    return out;
  };
  let ls =
    dx.length > ncxreg
      ? leastSquares(dx, flat(dcols, dx.length), dx.length, ncxreg)
      : { rank: 0, coef: new Float64Array(ncxreg), se: new Float64Array(ncxreg) };
  if (ls.rank === 0) ls = leastSquares(x, flat(cols, n), n, ncxreg);
  let complete = 0;
  for (let i = 0; i < n; i++) if (!(Number.isNaN(x[i]) || cols.some((c) => Number.isNaN(c[i])))) complete++;
  return { cols, rotation, coef: ls.coef, scale: Float64Array.from(ls.se, (se) => 10 * se), complete };
}

/**
 * The estimates back on the original regressors: beta = V gamma (in place in coef), and
 * Var(beta) = A Var A' with A = blockdiag(I, V) over the estimated coefficients.
 */
export function unrotateRegression(
  coef: Float64Array,
  varCoef: Float64Array | null,
  rotation: Float64Array,
  mask: readonly boolean[],
  narma: number,
): Float64Array | null {
  const ncxreg = coef.length - narma;
  const gamma = coef.slice(narma);
  for (let i = 0; i < ncxreg; i++) {
    let s = 0;
    for (let j = 0; j < ncxreg; j++) s += rotation[i * ncxreg + j] * gamma[j];
    coef[narma + i] = s;
  }
  if (!varCoef) return null;
  const idx = mask.flatMap((m, i) => (m ? [i] : []));
  const kk = idx.length;
  // The rotation's transpose At, so that A V A' = congruence(V, At).
  const At = new Float64Array(kk * kk);
  for (let a = 0; a < kk; a++)
    for (let b = 0; b < kk; b++) {
      const ia = idx[a];
      const ib = idx[b];
      if (ia >= narma && ib >= narma) At[a * kk + b] = rotation[(ib - narma) * ncxreg + (ia - narma)];
      else At[a * kk + b] = ia === ib ? 1 : 0;
    }
  return congruence(varCoef, At, kk);
}

function diffSeries(x: Float64Array, lag: number, times: number): Float64Array {
  let cur = x;
  for (let t = 0; t < times; t++) {
    const out = new Float64Array(Math.max(0, cur.length - lag));
    for (let i = 0; i < out.length; i++) out[i] = cur[i + lag] - cur[i];
    cur = out;
  }
  return cur;
}
