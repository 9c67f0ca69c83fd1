import { leastSquares } from '../../numerics/linalg.ts';
import { AutoArimaError, type AutoArimaModel } from './auto-arima-model.ts';
import { fitLikeArima } from './candidates.ts';
import type { Regressors } from './arima-estimation.ts';
import type { ArmaOrders } from './transform.ts';
import { isConstant, ndiffs, nsdiffs } from './unit-root.ts';

/**
 * The differencing orders of the automatic search, as forecast::auto.arima chooses them: D from
 * the STL seasonal strength, d from repeated KPSS tests (with regressors, both on the regression
 * residuals), never a difference that leaves nothing or turns a regressor constant. A series whose
 * differences are constant needs no search: forecast::Arima fits the one model it implies.
 */

export interface Differencing {
  readonly d: number;
  readonly D: number;
  /** The series differenced d and D times (the regression residuals, with regressors). */
  readonly dx: Float64Array;
}

export function chooseDifferencing(x: Float64Array, xreg: Regressors | null, m: number, maxD: number, maxSD: number): Differencing {
  const n = x.length;
  // With regressors, the differencing tests look at the regression residuals.
  let xx: Float64Array = x;
  let xregg: Regressors | null = null;
  if (xreg) {
    const keep = xreg.columns.map((c) => !isConstant(c));
    if (keep.some(Boolean)) {
      xregg = { names: xreg.names.filter((_, j) => keep[j]), columns: xreg.columns.filter((_, j) => keep[j]) };
      const k = xregg.columns.length + 1;
      const X = new Float64Array(n * k);
      X.fill(1, 0, n);
      xregg.columns.forEach((c, j) => X.set(c, (j + 1) * n));
      const ls = leastSquares(x, X, n, k);
      if (ls.rank < k) throw new AutoArimaError('xreg is rank deficient');
      xx = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let j = 0; j < k; j++) s += X[j * n + i] * ls.coef[j];
        xx[i] = x[i] - s;
      }
    }
  }

  let D: number;
  if (m === 1 || xx.length <= 2 * m) {
    D = 0;
  } else {
    D = nsdiffs(xx, m, maxSD);
    if (D > 0 && xregg && xregg.columns.some((c) => isConstant(diff(c, m, D)))) D--;
    if (D > 0 && diff(xx, m, D).length === 0) D--;
  }
  let dx = D > 0 ? diff(xx, m, D) : xx;
  let d = ndiffs(dx, maxD);
  if (d > 0 && xregg) {
    const dcols = xregg.columns.map((c) => diff(D > 0 ? diff(c, m, D) : c, 1, d));
    if (dcols.some((c) => isConstant(c))) d--;
  }
  if (d > 0 && diff(dx, 1, d).length === 0) d--;
  if (d > 0) dx = diff(dx, 1, d);

  if (dx.length === 0) throw new AutoArimaError('Not enough data to proceed');
  return { d, D, dx };
}

/** The model of a series whose differences are constant (dx), as forecast::auto.arima fits it. */
export function constantDifferencesModel(x: Float64Array, { d, D, dx }: Differencing, xreg: Regressors | null, m: number): AutoArimaModel {
  const o = (dd: number, DD: number): ArmaOrders => ({ p: 0, d: dd, q: 0, P: 0, D: DD, Q: 0, m: DD > 0 ? m : 1 });
  if (!xreg) {
    if (D > 0 && d === 0) {
      return fitLikeArima(x, o(0, D), { includeDrift: true, fixed: [mean(dx.map((v) => v / m))] });
    } else if (D > 0 && d > 0) {
      return fitLikeArima(x, o(d, D), {});
    } else if (d === 2) {
      return fitLikeArima(x, o(2, 0), {});
    } else if (d < 2) {
      return d === 0 ? fitLikeArima(x, o(0, 0), { includeMean: true, fixed: [mean(dx)] }) : fitLikeArima(x, o(d, 0), { includeDrift: true, fixed: [mean(dx)] });
    }
    throw new AutoArimaError('Data follow a simple polynomial and are not suitable for ARIMA modelling.');
  }
  return fitLikeArima(x, o(d, D), { xreg });
}

function diff(x: ArrayLike<number>, lag: number, times: number): Float64Array {
  let cur = Float64Array.from(x as ArrayLike<number>);
  for (let t = 0; t < times; t++) {
    const out = new Float64Array(Math.max(0, cur.length - lag));
    for (let i = 0; i < out.length; i++) out[i] = cur[i + lag] - cur[i];
    cur = out;
  }
  return cur;
}

function mean(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i];
  return s / x.length;
}
