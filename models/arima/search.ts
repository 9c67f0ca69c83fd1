/**
 * Automatic ARIMA order selection: the stepwise search of Hyndman & Khandakar (2008, J. Stat.
 * Software 27(3)) with the defaults and the variations of forecast::auto.arima (version 8.x):
 *
 * - d from repeated KPSS tests, D from the STL seasonal strength (> 0.64), never more than one;
 * - start from ARIMA(2,d,2)(1,D,1) (smaller for very short series), the white noise, AR(1)
 *   and MA(1) (seasonal when possible) models, then move one or two orders at a time among
 *   the neighbours, taking any improvement at once, up to 94 models;
 * - a constant (mean, or drift when d + D = 1) is tried on and off;
 * - models whose AR or MA roots come within 1.01 of the unit circle, or whose coefficient
 *   covariance has a negative variance, are refused;
 * - for long (n > 150) or highly seasonal (m > 12) series the search compares CSS fits through
 *   an approximate AICc (with an offset from the white-noise likelihood), then refits the best
 *   candidates by maximum likelihood in order until one succeeds.
 */
import { ArimaFitError, fitArima, predictArima, type ArimaFit, type ArimaMethod, type Regressors } from './fit.ts';
import { leastSquares } from '../linalg.ts';
import { hasRootWithin, type ArmaOrders } from './transform.ts';
import { isConstant, ndiffs, nsdiffs } from './unit-root.ts';

export type InformationCriterion = 'aicc' | 'aic' | 'bic';

export interface AutoArimaOptions {
  /** Seasonal period (1 = non-seasonal). */
  readonly m: number;
  /** Regressors for regression with ARIMA errors (same length as the series). */
  readonly xreg?: Regressors | null;
  readonly maxP?: number;
  readonly maxQ?: number;
  readonly maxSP?: number;
  readonly maxSQ?: number;
  readonly maxD?: number;
  readonly maxSD?: number;
  readonly ic?: InformationCriterion;
  /** Default: n > 150 or m > 12, as auto.arima. */
  readonly approximation?: boolean;
  readonly allowDrift?: boolean;
  readonly allowMean?: boolean;
  readonly nmodels?: number;
  /** Receives one line per model tried (like trace = TRUE). */
  readonly trace?: (line: string) => void;
}

/** The selected model, ready to forecast. */
export type AutoArimaModel =
  | {
      /** A constant series: forecasts repeat the first value with zero spread (as forecast.Arima). */
      readonly kind: 'constant';
      readonly value: number;
    }
  | {
      readonly kind: 'arima';
      readonly fit: ArimaFit;
      /** Residual variance with forecast's degrees-of-freedom correction; sets the intervals. */
      readonly sigma2: number;
      /** A drift column 1..n is the first non-intercept regressor. */
      readonly drift: boolean;
      readonly n: number;
      readonly aic: number;
      readonly aicc: number;
      readonly bic: number;
    };

export class AutoArimaError extends Error {
  override readonly name = 'AutoArimaError';
}

interface Candidate {
  readonly fit: ArimaFit | null;
  readonly ic: number;
  readonly aic: number;
  readonly aicc: number;
  readonly bic: number;
  readonly sigma2: number;
  readonly drift: boolean;
  readonly constant: boolean;
  readonly orders: ArmaOrders;
}

const FAILED = (orders: ArmaOrders, constant: boolean): Candidate => ({
  fit: null,
  ic: Infinity,
  aic: Infinity,
  aicc: Infinity,
  bic: Infinity,
  sigma2: NaN,
  drift: false,
  constant,
  orders,
});

function driftColumn(n: number, from = 1): Float64Array {
  const c = new Float64Array(n);
  for (let i = 0; i < n; i++) c[i] = from + i;
  return c;
}

function withDrift(n: number, xreg: Regressors | null | undefined): Regressors {
  return {
    names: ['drift', ...(xreg?.names ?? [])],
    columns: [driftColumn(n), ...(xreg?.columns ?? [])],
  };
}

/**
 * Models with an AR or MA root of modulus below this are refused. The test is exact (Schur-Cohn
 * on the expanded polynomial); R finds the roots with polyroot(), which loses accuracy on the
 * degree-100+ polynomials of weekly (m = 52) seasonal models and then refuses some models whose
 * roots are in fact well outside: there our search can keep a model R drops.
 */
const ROOT_MARGIN = 1.01;

/** True when some estimated coefficient has a negative (or undefined) variance. */
function badCovariance(fit: ArimaFit): boolean {
  const v = fit.varCoef;
  if (!v) return false;
  const k = Math.round(Math.sqrt(v.length));
  for (let i = 0; i < k; i++) {
    const d = v[i * k + i];
    if (Number.isNaN(d) || d < 0) return true;
  }
  return false;
}

function label(o: ArmaOrders, constant: boolean): string {
  let s = `ARIMA(${o.p},${o.d},${o.q})`;
  if (o.m > 1 && o.P + o.D + o.Q > 0) s += `(${o.P},${o.D},${o.Q})[${o.m}]`;
  const nd = o.d + o.D;
  if (constant && nd === 0) s += ' with non-zero mean';
  else if (constant && nd === 1) s += ' with drift';
  else if (!constant && nd === 0) s += ' with zero mean';
  return s;
}

/** One candidate fit scored by the information criterion (forecast's myarima). */
function scoreModel(
  x: Float64Array,
  o: ArmaOrders,
  constant: boolean,
  ic: InformationCriterion,
  approximation: boolean,
  offset: number,
  xreg: Regressors | null | undefined,
  trace?: (line: string) => void,
): Candidate {
  const n = x.length;
  const diffs = o.d + o.D;
  const method: ArimaMethod = approximation ? 'CSS' : 'CSS-ML';
  const drift = diffs === 1 && constant;
  let fit: ArimaFit;
  try {
    // A model with a root within 1.01 of the unit circle is refused below whatever its
    // coefficient covariance, so the fit may skip computing it.
    const common = { orders: o, method, cssWithoutState: true, refuseRootsWithin: ROOT_MARGIN };
    fit = drift ? fitArima(x, { ...common, xreg: withDrift(n, xreg) }) : fitArima(x, { ...common, includeMean: constant, xreg: xreg ?? null });
  } catch {
    trace?.(`${label(o, constant)} : Inf`);
    return FAILED(o, constant);
  }
  const nstar = n - o.d - o.D * o.m;
  const npar = fit.mask.filter(Boolean).length + 1;
  let aic = method === 'CSS' ? offset + nstar * Math.log(fit.sigma2) + 2 * npar : fit.aic;
  let bic: number;
  let aicc: number;
  let score: number;
  if (!Number.isNaN(aic)) {
    bic = aic + npar * (Math.log(nstar) - 2);
    aicc = aic + (2 * npar * (npar + 1)) / (nstar - npar - 1);
    score = ic === 'bic' ? bic : ic === 'aic' ? aic : aicc;
  } else {
    aic = bic = aicc = score = Infinity;
  }
  let ssr = 0;
  for (const e of fit.residuals) if (!Number.isNaN(e)) ssr += e * e;
  const sigma2 = ssr / (nstar - npar + 1);
  if (fit.refusedRoots || hasRootWithin(fit.phi, fit.theta, ROOT_MARGIN) || badCovariance(fit)) score = Infinity;
  trace?.(`${label(o, constant)} : ${score}`);
  return { fit, ic: score, aic, aicc, bic, sigma2, drift, constant, orders: o };
}

/** A fixed-specification fit as forecast::Arima makes it (used for the degenerate cases). */
function fitLikeArima(
  x: Float64Array,
  o: ArmaOrders,
  spec: { includeMean?: boolean; includeDrift?: boolean; fixed?: number[]; xreg?: Regressors | null },
): AutoArimaModel {
  const n = x.length;
  if (n <= o.d + o.D * o.m) throw new AutoArimaError('Not enough data to fit the model');
  let drift = spec.includeDrift ?? false;
  if (o.d + o.D > 1 && drift) drift = false;
  const xreg = drift ? withDrift(n, spec.xreg) : (spec.xreg ?? null);
  const fit = fitArima(x, { orders: o, includeMean: spec.includeMean ?? true, xreg, fixed: spec.fixed, method: 'CSS-ML' });
  const npar = fit.mask.filter(Boolean).length + 1;
  const nstar = n - o.d - o.D * o.m;
  let ssr = 0;
  for (const e of fit.residuals) if (!Number.isNaN(e)) ssr += e * e;
  const aicc = fit.aic + 2 * npar * (nstar / (nstar - npar - 1) - 1);
  const bic = fit.aic + npar * (Math.log(nstar) - 2);
  return { kind: 'arima', fit, sigma2: ssr / (nstar - npar + 1), drift, n, aic: fit.aic, aicc, bic };
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

/** Selects and fits the model, as auto.arima(y) with stepwise = TRUE. */
export function autoArima(y: ArrayLike<number>, opts: AutoArimaOptions): AutoArimaModel {
  const x = Float64Array.from(y as ArrayLike<number>);
  const n = x.length;
  if (n === 0) throw new AutoArimaError('All data are missing');
  const xreg = opts.xreg ?? null;
  const trace = opts.trace;
  const allowMeanOpt = opts.allowMean ?? true;

  if (isConstant(x)) {
    // forecast.Arima repeats the first value of a constant series with a zero-width interval.
    return { kind: 'constant', value: x[0] };
  }
  let ic: InformationCriterion = opts.ic ?? 'aicc';
  const m = opts.m < 1 ? 1 : Math.round(opts.m);
  let maxP = Math.min(opts.maxP ?? 5, Math.floor(n / 3));
  let maxQ = Math.min(opts.maxQ ?? 5, Math.floor(n / 3));
  let maxSP = Math.min(opts.maxSP ?? 2, Math.floor(n / 3 / m));
  let maxSQ = Math.min(opts.maxSQ ?? 2, Math.floor(n / 3 / m));
  if (n <= 3) ic = 'aic';

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
  if (m === 1) {
    D = 0;
    maxSP = 0;
    maxSQ = 0;
  } else if (xx.length <= 2 * m) {
    D = 0;
  } else {
    D = nsdiffs(xx, m, opts.maxSD ?? 1);
    if (D > 0 && xregg && xregg.columns.some((c) => isConstant(diff(c, m, D)))) D--;
    if (D > 0 && diff(xx, m, D).length === 0) D--;
  }
  let dx = D > 0 ? diff(xx, m, D) : xx;
  let d = ndiffs(dx, opts.maxD ?? 2);
  if (d > 0 && xregg) {
    const dcols = xregg.columns.map((c) => diff(D > 0 ? diff(c, m, D) : c, 1, d));
    if (dcols.some((c) => isConstant(c))) d--;
  }
  if (d > 0 && diff(dx, 1, d).length === 0) d--;
  if (d > 0) dx = diff(dx, 1, d);

  if (dx.length === 0) throw new AutoArimaError('Not enough data to proceed');
  if (isConstant(dx)) {
    const o = (dd: number, DD: number): ArmaOrders => ({ p: 0, d: dd, q: 0, P: 0, D: DD, Q: 0, m: DD > 0 ? m : 1 });
    if (!xreg) {
      if (D > 0 && d === 0) {
        return fitLikeArima(x, o(0, D), { includeDrift: true, fixed: [mean(dx.map((v) => v / m))] });
      } else if (D > 0 && d > 0) {
        return fitLikeArima(x, o(d, D), {});
      } else if (d === 2) {
        return fitLikeArima(x, o(2, 0), {});
      } else if (d < 2) {
        return d === 0
          ? fitLikeArima(x, o(0, 0), { includeMean: true, fixed: [mean(dx)] })
          : fitLikeArima(x, o(d, 0), { includeDrift: true, fixed: [mean(dx)] });
      }
      throw new AutoArimaError('Data follow a simple polynomial and are not suitable for ARIMA modelling.');
    }
    return fitLikeArima(x, o(d, D), { xreg });
  }

  if (m > 1) {
    if (maxSP > 0) maxP = Math.min(maxP, m - 1);
    if (maxSQ > 0) maxQ = Math.min(maxQ, m - 1);
  }

  const approximation = opts.approximation ?? (n > 150 || m > 12);
  let offset = 0;
  if (approximation) {
    try {
      const wn = fitArima(x, { orders: { p: 0, d, q: 0, P: 0, D, Q: 0, m }, xreg });
      offset = -2 * wn.loglik - n * Math.log(wn.sigma2);
    } catch {
      offset = 0;
    }
  }

  const allowDrift = (opts.allowDrift ?? true) && d + D === 1;
  const allowMean = allowMeanOpt && d + D === 0;
  let constant = allowDrift || allowMean;

  let startP = 2;
  let startQ = 2;
  let startSP = 1;
  let startSQ = 1;
  if (n < 10) {
    startP = Math.min(startP, 1);
    startQ = Math.min(startQ, 1);
    startSP = 0;
    startSQ = 0;
  }
  let p = Math.min(startP, maxP);
  let q = Math.min(startQ, maxQ);
  let P = Math.min(startSP, maxSP);
  let Q = Math.min(startSQ, maxSQ);

  const nmodels = opts.nmodels ?? 94;
  type Row = { p: number; q: number; P: number; Q: number; constant: boolean; ic: number };
  const results: Row[] = [];
  const orders = (pp: number, qq: number, PP: number, QQ: number): ArmaOrders => ({ p: pp, d, q: qq, P: PP, D, Q: QQ, m });
  const tryModel = (pp: number, qq: number, PP: number, QQ: number, c: boolean): Candidate => {
    const fit = scoreModel(x, orders(pp, qq, PP, QQ), c, ic, approximation, offset, xreg, trace);
    results.push({ p: pp, q: qq, P: PP, Q: QQ, constant: c, ic: fit.ic });
    return fit;
  };
  const isNew = (pp: number, qq: number, PP: number, QQ: number, c: boolean) =>
    !results.some((r) => r.p === pp && r.q === qq && r.P === PP && r.Q === QQ && r.constant === c);

  let best = tryModel(p, q, P, Q, constant);
  let fit = tryModel(0, 0, 0, 0, constant);
  if (fit.ic < best.ic) {
    best = fit;
    p = q = P = Q = 0;
  }
  if (maxP > 0 || maxSP > 0) {
    const pp = maxP > 0 ? 1 : 0;
    const PP = m > 1 && maxSP > 0 ? 1 : 0;
    fit = tryModel(pp, 0, PP, 0, constant);
    if (fit.ic < best.ic) {
      best = fit;
      p = pp;
      P = PP;
      q = Q = 0;
    }
  }
  if (maxQ > 0 || maxSQ > 0) {
    const qq = maxQ > 0 ? 1 : 0;
    const QQ = m > 1 && maxSQ > 0 ? 1 : 0;
    fit = tryModel(0, qq, 0, QQ, constant);
    if (fit.ic < best.ic) {
      best = fit;
      p = P = 0;
      Q = QQ;
      q = qq;
    }
  }
  if (constant) {
    fit = tryModel(0, 0, 0, 0, false);
    if (fit.ic < best.ic) {
      best = fit;
      p = q = P = Q = 0;
    }
  }

  // Neighbour moves in auto.arima's order: (dp, dq, dP, dQ) and the condition to try each.
  const moves: [number, number, number, number][] = [
    [0, 0, -1, 0],
    [0, 0, 0, -1],
    [0, 0, 1, 0],
    [0, 0, 0, 1],
    [0, 0, -1, -1],
    [0, 0, -1, 1],
    [0, 0, 1, -1],
    [0, 0, 1, 1],
    [-1, 0, 0, 0],
    [0, -1, 0, 0],
    [1, 0, 0, 0],
    [0, 1, 0, 0],
    [-1, -1, 0, 0],
    [-1, 1, 0, 0],
    [1, -1, 0, 0],
    [1, 1, 0, 0],
  ];
  const within = (v: number, max: number) => v >= 0 && v <= max;
  let k = results.length;
  let startk = 0;
  search: while (startk < k && k < nmodels) {
    startk = k;
    let improved = false;
    for (const [dp, dq, dP, dQ] of moves) {
      const pp = p + dp;
      const qq = q + dq;
      const PP = P + dP;
      const QQ = Q + dQ;
      if (!within(pp, maxP) || !within(qq, maxQ) || !within(PP, maxSP) || !within(QQ, maxSQ)) continue;
      if (!isNew(pp, qq, PP, QQ, constant)) continue;
      k++;
      if (k > nmodels) break search;
      fit = tryModel(pp, qq, PP, QQ, constant);
      if (fit.ic < best.ic) {
        best = fit;
        p = pp;
        q = qq;
        P = PP;
        Q = QQ;
        improved = true;
        break;
      }
    }
    if (improved) continue;
    if (allowDrift || allowMean) {
      if (isNew(p, q, P, Q, !constant)) {
        k++;
        if (k > nmodels) break;
        fit = tryModel(p, q, P, Q, !constant);
        if (fit.ic < best.ic) {
          best = fit;
          constant = !constant;
        }
      }
    }
  }

  if (approximation && best.fit) {
    // Refit the candidates by maximum likelihood, best approximate criterion first.
    const order = results.map((_, i) => i).sort((a, b) => compareIc(results[a].ic, results[b].ic) || a - b);
    for (const i of order) {
      const r = results[i];
      const refit = scoreModel(x, orders(r.p, r.q, r.P, r.Q), r.constant, ic, false, 0, xreg, trace);
      if (refit.ic < Infinity) {
        best = refit;
        break;
      }
    }
  }
  if (!(best.ic < Infinity) || !best.fit) throw new AutoArimaError('No suitable ARIMA model found');

  let bestFit = best.fit;
  if (!bestFit.model) {
    // The approximate fit won (no exact refit succeeded): recompute it with its filtered state.
    const o = best.orders;
    bestFit = best.drift
      ? fitArima(x, { orders: o, xreg: withDrift(n, xreg), method: 'CSS' })
      : fitArima(x, { orders: o, includeMean: best.constant, xreg, method: 'CSS' });
  }
  return { kind: 'arima', fit: bestFit, sigma2: best.sigma2, drift: best.drift, n, aic: best.aic, aicc: best.aicc, bic: best.bic };
}

/** R's order(): ascending, NaN last (no NaN arises here), stable. */
function compareIc(a: number, b: number): number {
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

export interface ArimaForecast {
  readonly mean: Float64Array;
  /** Standard deviation of the forecast error at each step. */
  readonly sd: Float64Array;
}

/** h-step forecasts of a selected model (forecast.Arima / predict.Arima). */
export function forecastModel(model: AutoArimaModel, h: number, newxreg?: readonly Float64Array[]): ArimaForecast {
  if (model.kind === 'constant') {
    return { mean: new Float64Array(h).fill(model.value), sd: new Float64Array(h) };
  }
  const future: Float64Array[] = [];
  if (model.drift) future.push(driftColumn(h, model.n + 1));
  for (const c of newxreg ?? []) future.push(c);
  const { mean, variance } = predictArima(model.fit, h, future);
  const sd = new Float64Array(h);
  for (let i = 0; i < h; i++) sd[i] = Math.sqrt(variance[i] * model.sigma2);
  return { mean, sd };
}

export { ArimaFitError };
