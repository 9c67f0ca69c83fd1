/**
 * One ARIMA(p,d,q)(P,D,Q)m fit with optional regressors, by the rules of R's stats::arima: "CSS",
 * "ML" (the exact Kalman-filter likelihood, AR blocks through the partial-autocorrelation
 * transform so every trial point is stationary, MA flipped to invertible afterwards) or "CSS-ML"
 * (the default: ML from the CSS optimum). Regressors enter as regression with ARIMA errors. A fit
 * whose numerical Hessian cannot be inverted fails, as in R.
 */
import { congruence, invert } from '../../numerics/linalg.ts';
import { minimizeBfgs, numericHessian, type OptimResult } from './bfgs.ts';
import { cssMeanSquare, differenceForCss, sparsePoly } from './css.ts';
import { kalmanForecast } from './kalman-forecast.ts';
import { kalmanLikelihood } from './kalman.ts';
import { ArimaObjectives, masked } from './objectives.ts';
import { invertMa } from './polyroot.ts';
import { removeRegression, startRegression, unrotateRegression } from './regression.ts';
import { differencingPolynomial, makeStateSpace, type ArimaStateSpace } from './arima-state-space.ts';
import { armaCount, expandArma, hasRootWithin, invTransform, rootsOutside, transformJacobian, undoTransform, type ArmaOrders } from './transform.ts';

/** A fit stats::arima would stop with an error on. */
export class ArimaFitError extends Error {
  override readonly name = 'ArimaFitError';
}

export type ArimaMethod = 'CSS-ML' | 'ML' | 'CSS';

/** Numeric regressors, one column per variable, each as long as the series. */
export interface Regressors {
  readonly names: readonly string[];
  readonly columns: readonly Float64Array[];
}

export interface ArimaOptions {
  readonly orders: ArmaOrders;
  /** Intercept when d + D = 0 (default true). */
  readonly includeMean?: boolean;
  readonly xreg?: Regressors | null;
  readonly method?: ArimaMethod;
  /** Fixed values (NaN = estimated) for the ARMA coefficients then the regression coefficients. */
  readonly fixed?: ArrayLike<number>;
  /** Skip the final Kalman pass of a CSS fit (the search needs only its criterion). */
  readonly cssWithoutState?: boolean;
  /**
   * When the estimates have an AR or MA root closer to the origin than this, skip their
   * covariance (the numerical Hessian): the search refuses such a model whatever it is.
   */
  readonly refuseRootsWithin?: number;
  /**
   * Called with the AIC of an ML fit and its number of estimated coefficients before its
   * coefficient covariance (the numerical Hessian, the most costly part of a fit) is computed;
   * true skips the covariance (varCoef is then null and covarianceSkipped true). The search
   * skips it for a candidate that cannot win anyway.
   */
  readonly skipCovariance?: (aic: number, estimated: number) => boolean;
}

export interface ArimaFit {
  readonly orders: ArmaOrders;
  readonly method: ArimaMethod;
  /** ARMA coefficients (ar, ma, sar, sma) then regression coefficients. */
  readonly coef: Float64Array;
  readonly names: readonly string[];
  /** True for estimated coefficients. */
  readonly mask: readonly boolean[];
  /** Innovation variance as stats::arima reports it. */
  readonly sigma2: number;
  /** Covariance of the estimated coefficients (row-major, mask order); null when none are estimated. */
  readonly varCoef: Float64Array | null;
  readonly loglik: number;
  /** NaN for CSS fits. */
  readonly aic: number;
  readonly residuals: Float64Array;
  readonly nUsed: number;
  readonly convergence: number;
  /** Expanded AR and MA polynomials of the estimates. */
  readonly phi: Float64Array;
  readonly theta: Float64Array;
  /** Filtered state at the end of the series (null for a CSS fit run without state). */
  readonly model: ArimaStateSpace | null;
  /** Regression columns in coefficient order after the ARMA part (intercept first when present). */
  readonly regressors: Regressors;
  readonly hasIntercept: boolean;
  /** True when refuseRootsWithin caught a root (varCoef is then null). */
  readonly refusedRoots: boolean;
  /** True when skipCovariance declined the covariance (varCoef is then null). */
  readonly covarianceSkipped: boolean;
}

const LOG_2PI = Math.log(2 * Math.PI);

/** -2 log-likelihood from the optimiser's objective (0.5 log s2 + sumlog / 2 nu per observation). */
function deviance(value: number, nUsed: number): number {
  return 2 * nUsed * value + nUsed + nUsed * LOG_2PI;
}

/** True when 1 - ar_1 z - ... has all roots outside the unit circle (trailing zeros dropped). */
function arStationary(ar: ArrayLike<number>, off: number, k: number): boolean {
  const c = new Float64Array(k);
  for (let i = 0; i < k; i++) c[i] = ar[off + i];
  return rootsOutside(c, k, 1);
}

/** Positions among the estimated coefficients: regression ones, then MA, then AR. */
function differenceOrder(o: ArmaOrders, mask: readonly boolean[]): number[] {
  const position: number[] = [];
  let k = 0;
  for (const m of mask) position.push(m ? k++ : -1);
  const isAr = (i: number) => i < o.p || (i >= o.p + o.q && i < o.p + o.q + o.P);
  const isMa = (i: number) => !isAr(i) && i < armaCount(o);
  const pick = (want: (i: number) => boolean) => position.filter((pos, i) => pos >= 0 && want(i));
  return [...pick((i) => i >= armaCount(o)), ...pick(isMa), ...pick(isAr)];
}

/** inv(H * nUsed), or A' inv(H * nUsed) A. */
function coefficientCovariance(H: Float64Array, k: number, nUsed: number, A: Float64Array | null): Float64Array {
  const Hs = new Float64Array(k * k);
  for (let i = 0; i < k * k; i++) Hs[i] = H[i] * nUsed;
  const inv = invert(Hs, k);
  if (!A) return inv;
  return congruence(inv, A, k);
}

/**
 * Fits the model (stats::arima). Throws ArimaFitError (or an optimiser/solver error) on failure.
 * Regressors (an intercept when there is no differencing, a drift column, user columns): y_t - x_t'
 * beta follows the ARIMA model; their starting values come from least squares on the differenced
 * data, and their standard errors set the optimiser's scale. The covariance of the estimates is the
 * inverse numerical Hessian (delta method through the transform).
 */
export function fitArima(y: ArrayLike<number>, opts: ArimaOptions): ArimaFit {
  const o = opts.orders;
  const x = Float64Array.from(y as ArrayLike<number>);
  const n = x.length;
  let method: ArimaMethod = opts.method ?? 'CSS-ML';
  const delta = differencingPolynomial(o.d, o.D, o.m);
  const nd = o.d + o.D;
  const narma = armaCount(o);

  const names: string[] = [];
  for (let i = 1; i <= o.p; i++) names.push(`ar${i}`);
  for (let i = 1; i <= o.q; i++) names.push(`ma${i}`);
  for (let i = 1; i <= o.P; i++) names.push(`sar${i}`);
  for (let i = 1; i <= o.Q; i++) names.push(`sma${i}`);

  let cols: Float64Array[] = [];
  const regNames: string[] = [];
  const hasIntercept = (opts.includeMean ?? true) && nd === 0;
  if (hasIntercept) {
    cols.push(new Float64Array(n).fill(1));
    regNames.push('intercept');
  }
  if (opts.xreg) {
    for (let j = 0; j < opts.xreg.columns.length; j++) {
      if (opts.xreg.columns[j].length !== n) throw new ArimaFitError("lengths of 'x' and 'xreg' do not match");
      cols.push(Float64Array.from(opts.xreg.columns[j]));
      regNames.push(opts.xreg.names[j]);
    }
  }
  const origCols = cols.map((c) => Float64Array.from(c));
  const ncxreg = cols.length;
  const isMissing = (i: number) => Number.isNaN(x[i]) || cols.some((c) => Number.isNaN(c[i]));
  let anyMissing = false;
  for (let i = 0; i < n; i++) if (isMissing(i)) anyMissing = true;
  if (method === 'CSS-ML' && anyMissing) method = 'ML';

  let ncond = 0;
  if (method === 'CSS' || method === 'CSS-ML') ncond = o.d + o.D * o.m + o.p + o.m * o.P;

  const nPar = narma + ncxreg;
  const fixed = new Float64Array(nPar).fill(NaN);
  if (opts.fixed) {
    if (opts.fixed.length !== nPar) throw new ArimaFitError("wrong length for 'fixed'");
    for (let i = 0; i < nPar; i++) fixed[i] = opts.fixed[i];
  }
  const mask = Array.from(fixed, (v) => Number.isNaN(v));
  const noOptim = !mask.some(Boolean);
  let transformPars = !noOptim;
  if (transformPars) {
    for (let i = 0; i < o.p; i++) if (!mask[i]) transformPars = false;
    for (let i = 0; i < o.P; i++) if (!mask[o.p + o.q + i]) transformPars = false;
  }

  const init0 = new Float64Array(nPar);
  const parscale = new Float64Array(nPar).fill(1);
  let nUsed = 0;
  for (let i = 0; i < n; i++) if (!Number.isNaN(x[i])) nUsed++;
  nUsed -= delta.length;
  let rotation: Float64Array | null = null;
  if (ncxreg > 0) {
    const start = startRegression(
      x,
      cols,
      o,
      mask.slice(narma).some((estimated) => !estimated),
    );
    cols = start.cols;
    rotation = start.rotation;
    nUsed = start.complete - delta.length;
    init0.set(start.coef, narma);
    parscale.set(start.scale, narma);
  }
  if (nUsed <= 0) throw new ArimaFitError('too few non-missing observations');

  const init = Float64Array.from(init0);
  const coef = Float64Array.from(fixed);
  const pscale = masked(parscale, mask);
  // Finite differences perturb the regression coefficients first, then the MA ones, then the AR
  // ones: the likelihood reuses the filter's gains while phi and theta stay, and the stationary
  // covariance's factorisation while phi stays (objectives.ts).
  const order = differenceOrder(o, mask);
  const objectives = new ArimaObjectives(x, o, cols, coef, mask, delta);

  let res: OptimResult;
  let sigma2: number;
  let refusedRoots = false;
  let covarianceSkipped = false;
  const nMask = mask.filter(Boolean).length;
  const skips = (r: OptimResult): boolean => {
    if (opts.skipCovariance && opts.skipCovariance(deviance(r.value, nUsed) + 2 * nMask + 2, nMask)) covarianceSkipped = true;
    return covarianceSkipped;
  };
  const refuses = (c: Float64Array): boolean => {
    if (opts.refuseRootsWithin === undefined) return false;
    const e = expandArma(c, o, false);
    return hasRootWithin(e.phi, e.theta, opts.refuseRootsWithin);
  };
  let varCoef: Float64Array | null = null;
  let residuals: Float64Array;
  let model: ArimaStateSpace | null = null;
  let phi: Float64Array;
  let theta: Float64Array;
  const work = new Float64Array(n);

  if (method === 'CSS') {
    const fn = objectives.css(ncond);
    if (noOptim) {
      res = { par: new Float64Array(0), value: fn(new Float64Array(0)), convergence: 0, fnCount: 1, grCount: 0 };
    } else {
      res = minimizeBfgs(fn, masked(init, mask), { parscale: pscale, order });
    }
    let k = 0;
    for (let i = 0; i < nPar; i++) if (mask[i]) coef[i] = res.par[k++];
    ({ phi, theta } = expandArma(coef, o, false));
    removeRegression(x, cols, coef, narma, work);
    if (!opts.cssWithoutState) {
      model = makeStateSpace(phi, theta, delta);
      kalmanLikelihood(work, model);
    }
    const w = new Float64Array(n);
    differenceForCss(work, o, w);
    residuals = new Float64Array(n);
    sigma2 = cssMeanSquare(w, n, sparsePoly(phi), sparsePoly(theta), theta.length, ncond, residuals);
    refusedRoots = opts.refuseRootsWithin !== undefined && hasRootWithin(phi, theta, opts.refuseRootsWithin);
    if (!noOptim && !refusedRoots) {
      const H = numericHessian(fn, res.par, { parscale: pscale, order });
      varCoef = coefficientCovariance(H, res.par.length, nUsed, null);
    }
  } else {
    if (method === 'CSS-ML') {
      const fn = objectives.css(ncond);
      const cssRes = noOptim
        ? { par: new Float64Array(0), value: fn(new Float64Array(0)), convergence: 0 as const }
        : minimizeBfgs(fn, masked(init, mask), { parscale: pscale, order });
      if (cssRes.convergence === 0) {
        let k = 0;
        for (let i = 0; i < nPar; i++) if (mask[i]) init[i] = cssRes.par[k++];
      }
      if (o.p > 0 && !arStationary(init, 0, o.p)) throw new ArimaFitError('non-stationary AR part from CSS');
      if (o.P > 0 && !arStationary(init, o.p + o.q, o.P)) throw new ArimaFitError('non-stationary seasonal AR part from CSS');
      ncond = 0;
    }
    let start: Float64Array = init;
    if (transformPars) {
      start = invTransform(init, o);
      if (o.q > 0) start.set(invertMa(start.slice(o.p, o.p + o.q)), o.p);
      if (o.Q > 0) start.set(invertMa(start.slice(o.p + o.q + o.P, narma)), o.p + o.q + o.P);
    }
    const fn = objectives.likelihood(transformPars);
    if (noOptim) {
      res = { par: new Float64Array(0), value: fn(new Float64Array(0)), convergence: 0, fnCount: 1, grCount: 0 };
    } else {
      res = minimizeBfgs(fn, masked(start, mask), { parscale: pscale, order });
    }
    let k = 0;
    for (let i = 0; i < nPar; i++) if (mask[i]) coef[i] = res.par[k++];
    let H: Float64Array | null = null;
    if (transformPars) {
      const allMasked = (from: number, to: number) => mask.slice(from, to).every(Boolean);
      if (o.q > 0 && allMasked(o.p, o.p + o.q)) coef.set(invertMa(coef.slice(o.p, o.p + o.q)), o.p);
      if (o.Q > 0 && allMasked(o.p + o.q + o.P, narma)) coef.set(invertMa(coef.slice(o.p + o.q + o.P, narma)), o.p + o.q + o.P);
      const cm = masked(coef, mask);
      let changed = false;
      for (let i = 0; i < cm.length; i++) if (cm[i] !== res.par[i]) changed = true;
      if (changed) {
        const old = res.convergence;
        res = { ...minimizeBfgs(fn, cm, { parscale: pscale, order, maxit: 0 }), convergence: old };
        k = 0;
        for (let i = 0; i < nPar; i++) if (mask[i]) coef[i] = res.par[k++];
      }
      const final = undoTransform(coef, o);
      refusedRoots = refuses(final);
      if (!refusedRoots && !skips(res)) {
        H = numericHessian(fn, res.par, { parscale: pscale, order });
        const Afull = transformJacobian(coef, o);
        const idx = mask.flatMap((m, i) => (m ? [i] : []));
        const kk = idx.length;
        const A = new Float64Array(kk * kk);
        for (let a = 0; a < kk; a++) for (let b = 0; b < kk; b++) A[a * kk + b] = Afull[idx[a] * nPar + idx[b]];
        varCoef = coefficientCovariance(H, kk, nUsed, A);
      }
      coef.set(final);
    } else if (!noOptim) {
      refusedRoots = refuses(coef);
      if (!refusedRoots && !skips(res)) {
        H = numericHessian(fn, res.par, { parscale: pscale, order });
        varCoef = coefficientCovariance(H, res.par.length, nUsed, null);
      }
    }
    ({ phi, theta } = expandArma(coef, o, false));
    model = makeStateSpace(phi, theta, delta);
    removeRegression(x, cols, coef, narma, work);
    residuals = new Float64Array(n);
    const sums = kalmanLikelihood(work, model, residuals);
    sigma2 = sums.ssq / nUsed;
  }

  const value = deviance(res.value, nUsed);
  const aic = method !== 'CSS' ? value + 2 * nMask + 2 : NaN;

  if (rotation) varCoef = unrotateRegression(coef, varCoef, rotation, mask, narma);

  return {
    orders: o,
    method,
    coef,
    names: [...names, ...regNames],
    mask,
    sigma2,
    varCoef,
    loglik: -0.5 * value,
    aic,
    residuals,
    nUsed,
    convergence: res.convergence,
    phi,
    theta,
    model,
    regressors: { names: regNames, columns: origCols },
    hasIntercept,
    refusedRoots,
    covarianceSkipped,
  };
}

/** Point forecasts and variances (in units of the fit's sigma2 = 1) for h steps, with future regressors. */
export function predictArima(fit: ArimaFit, h: number, newxreg?: readonly Float64Array[]): { mean: Float64Array; variance: Float64Array } {
  if (!fit.model) throw new ArimaFitError('the fit has no filtered state to forecast from');
  const { mean, variance } = kalmanForecast(h, fit.model);
  const narma = armaCount(fit.orders);
  const ncx = fit.coef.length - narma;
  if (ncx > 0) {
    const future: Float64Array[] = [];
    if (fit.hasIntercept) future.push(new Float64Array(h).fill(1));
    for (const c of newxreg ?? []) future.push(c);
    if (future.length !== ncx) throw new ArimaFitError(`expected ${ncx - (fit.hasIntercept ? 1 : 0)} future regressors, got ${newxreg?.length ?? 0}`);
    for (let t = 0; t < h; t++) {
      let s = 0;
      for (let j = 0; j < ncx; j++) s += future[j][t] * fit.coef[narma + j];
      mean[t] += s;
    }
  }
  return { mean, variance };
}
