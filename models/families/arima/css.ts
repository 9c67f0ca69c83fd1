/**
 * Conditional sum of squares of an ARIMA model: difference the series, then run the ARMA
 * recursion with the first `ncond` innovations (and every pre-sample value) set to zero.
 * Cheap (no covariance recursion), so the search uses it for long or highly seasonal series and
 * the exact likelihood starts from its optimum.
 */
import type { ArmaOrders } from './transform.ts';

/** Differences y in place-copy: d times at lag 1, then D times at lag m (leading values kept as is). */
export function differenceForCss(y: ArrayLike<number>, o: ArmaOrders, w: Float64Array): void {
  const n = y.length;
  for (let l = 0; l < n; l++) w[l] = y[l];
  for (let i = 0; i < o.d; i++) for (let l = n - 1; l > 0; l--) w[l] -= w[l - 1];
  for (let i = 0; i < o.D; i++) for (let l = n - 1; l >= o.m; l--) w[l] -= w[l - o.m];
}

/**
 * Non-zero lags of a polynomial, for the recursion to skip the zeros of seasonal products. The
 * first `count` entries of `lag` and `coef` hold them; the arrays may be longer.
 */
export interface SparsePoly {
  readonly lag: Int32Array;
  readonly coef: Float64Array;
  count: number;
}

/**
 * The non-zero lags of c, written into `into` when it is large enough. The CSS objective builds
 * two per evaluation inside the optimiser: fresh typed arrays each time showed in its profile.
 */
export function sparsePoly(c: Float64Array, into?: SparsePoly): SparsePoly {
  const poly = into && into.lag.length >= c.length ? into : { lag: new Int32Array(c.length), coef: new Float64Array(c.length), count: 0 };
  let k = 0;
  for (let i = 0; i < c.length; i++) {
    if (c[i] === 0) continue;
    poly.lag[k] = i;
    poly.coef[k++] = c[i];
  }
  poly.count = k;
  return poly;
}

/**
 * Mean squared conditional residual over the non-missing residuals after ncond; w is the
 * differenced series. Residuals are written to resid (zeros for the first ncond) when given.
 */
export function cssMeanSquare(w: Float64Array, n: number, phi: SparsePoly, theta: SparsePoly, q: number, ncond: number, resid: Float64Array): number {
  let ssq = 0;
  let nu = 0;
  const pl = phi.lag;
  const pc = phi.coef;
  const ql = theta.lag;
  const qc = theta.coef;
  const np = phi.count;
  const nq = theta.count;
  for (let l = 0; l < ncond && l < n; l++) resid[l] = 0;
  for (let l = ncond; l < n; l++) {
    let tmp = w[l];
    for (let j = 0; j < np; j++) tmp -= pc[j] * w[l - pl[j] - 1];
    // Innovations before ncond count as zero: only lags up to l - ncond are used.
    const maxLag = Math.min(l - ncond, q);
    for (let j = 0; j < nq; j++) {
      const lag = ql[j];
      if (lag >= maxLag) break;
      tmp -= qc[j] * resid[l - lag - 1];
    }
    resid[l] = tmp;
    if (!Number.isNaN(tmp)) {
      nu++;
      ssq += tmp * tmp;
    }
  }
  return ssq / nu;
}
