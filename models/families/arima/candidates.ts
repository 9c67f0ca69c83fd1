import { fitArima, type ArimaFit, type ArimaMethod, type Regressors } from './arima-estimation.ts';
import { AutoArimaError, withDrift, type AutoArimaModel, type InformationCriterion } from './auto-arima-model.ts';
import { hasRootWithin, type ArmaOrders } from './transform.ts';

/**
 * The models the search tries, each fitted and scored by its information criterion as
 * forecast::auto.arima's myarima does (refusing near-unit roots and negative variances); the
 * fixed-specification fit forecast::Arima makes for the degenerate cases; and a selected model
 * carried to another history, as forecast::Arima(y, model = fit) does.
 */

export interface Candidate {
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

/** The information criteria of a fit from its AIC (Infinity throughout when it is NaN). */
function criteria(aic: number, npar: number, nstar: number, ic: InformationCriterion) {
  if (Number.isNaN(aic)) return { aic: Infinity, bic: Infinity, aicc: Infinity, score: Infinity };
  const bic = aic + npar * (Math.log(nstar) - 2);
  const aicc = aic + (2 * npar * (npar + 1)) / (nstar - npar - 1);
  return { aic, bic, aicc, score: ic === 'bic' ? bic : ic === 'aic' ? aic : aicc };
}

/**
 * The residual variance that sets a model's intervals: the residuals' sum of squares over the
 * differenced length `nstar` less the `npar` estimated parameters, plus one (forecast's
 * degrees-of-freedom correction).
 */
function residualVariance(fit: ArimaFit, nstar: number, npar: number): number {
  let ssr = 0;
  for (const e of fit.residuals) if (!Number.isNaN(e)) ssr += e * e;
  return ssr / (nstar - npar + 1);
}

/**
 * One candidate fit scored by the information criterion (forecast's myarima).
 *
 * `beat`: the score the candidate must beat to be of any use (the search's best so far). An exact
 * (CSS-ML) fit that cannot beat it skips its coefficient covariance, whose only role is to refuse
 * the model (a negative variance): its score is then the criterion unchecked, still >= beat, so
 * the search makes the same choices. Not with `trace`, whose lines show the checked score.
 */
export function scoreModel(
  x: Float64Array,
  o: ArmaOrders,
  constant: boolean,
  ic: InformationCriterion,
  approximation: boolean,
  offset: number,
  xreg: Regressors | null | undefined,
  trace?: (line: string) => void,
  beat = Infinity,
): Candidate {
  const n = x.length;
  const diffs = o.d + o.D;
  const method: ArimaMethod = approximation ? 'CSS' : 'CSS-ML';
  const drift = diffs === 1 && constant;
  const nstar = n - o.d - o.D * o.m;
  let fit: ArimaFit;
  try {
    // A model with a root within 1.01 of the unit circle is refused below whatever its
    // coefficient covariance, so the fit may skip computing it.
    const common = {
      orders: o,
      method,
      cssWithoutState: true,
      refuseRootsWithin: ROOT_MARGIN,
      skipCovariance:
        beat < Infinity && !trace && method === 'CSS-ML'
          ? (aic: number, estimated: number) => criteria(aic, estimated + 1, nstar, ic).score >= beat
          : undefined,
    };
    fit = drift ? fitArima(x, { ...common, xreg: withDrift(n, xreg) }) : fitArima(x, { ...common, includeMean: constant, xreg: xreg ?? null });
  } catch {
    trace?.(`${label(o, constant)} : Inf`);
    return FAILED(o, constant);
  }
  const npar = fit.mask.filter(Boolean).length + 1;
  const { aic, bic, aicc, score: checked } = criteria(method === 'CSS' ? offset + nstar * Math.log(fit.sigma2) + 2 * npar : fit.aic, npar, nstar, ic);
  let score = checked;
  const sigma2 = residualVariance(fit, nstar, npar);
  if (fit.refusedRoots || hasRootWithin(fit.phi, fit.theta, ROOT_MARGIN) || badCovariance(fit)) score = Infinity;
  trace?.(`${label(o, constant)} : ${score}`);
  return { fit, ic: score, aic, aicc, bic, sigma2, drift, constant, orders: o };
}

/** A fixed-specification fit as forecast::Arima makes it (used for the degenerate cases). */
export function fitLikeArima(
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
  const aicc = fit.aic + 2 * npar * (nstar / (nstar - npar - 1) - 1);
  const bic = fit.aic + npar * (Math.log(nstar) - 2);
  return { kind: 'arima', fit, sigma2: residualVariance(fit, nstar, npar), drift, n, aic: fit.aic, aicc, bic };
}

/**
 * A selected model on another history, as forecast::Arima(y, model = fit): the observations pass
 * through the Kalman filter with the model's orders, mean, drift and regressors. Nothing is
 * estimated: the coefficients and the residual variance stay the fit's (R's arima2 keeps
 * model$sigma2).
 */
export function keptModel(model: Extract<AutoArimaModel, { kind: 'arima' }>, x: Float64Array, xreg: Regressors | null): AutoArimaModel {
  const { orders: o, hasIntercept, coef } = model.fit;
  const n = x.length;
  if (n <= o.d + o.D * o.m) throw new AutoArimaError('Not enough data to fit the model');
  const fit = fitArima(x, { orders: o, includeMean: hasIntercept, xreg: model.drift ? withDrift(n, xreg) : xreg, fixed: coef, method: model.fit.method });
  return { ...model, fit, n };
}
