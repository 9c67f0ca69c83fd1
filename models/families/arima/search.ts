/**
 * Automatic ARIMA order selection: the stepwise search of Hyndman & Khandakar (2008, J. Stat.
 * Software 27(3)) with the defaults and the variations of forecast::auto.arima (version 8.x).
 * Whether long or highly seasonal series are compared through an approximation:
 * docs/decisions/006-aarima-keeps-r-approximation.md.
 */
import { withDrift, AutoArimaError, type AutoArimaModel, type AutoArimaOptions, type InformationCriterion } from './auto-arima-model.ts';
import { scoreModel, type Candidate } from './candidates.ts';
import { chooseDifferencing, constantDifferencesModel } from './differencing-order.ts';
import { fitArima } from './arima-estimation.ts';
import type { ArmaOrders } from './transform.ts';
import { isConstant } from './unit-root.ts';

/**
 * Selects and fits the model, as auto.arima(y) with stepwise = TRUE:
 * - d from repeated KPSS tests, D from the STL seasonal strength (> 0.64), never more than one;
 * - start from ARIMA(2,d,2)(1,D,1) (smaller for very short series), the white noise, AR(1)
 *   and MA(1) (seasonal when possible) models, then move one or two orders at a time among
 *   the neighbours, taking any improvement at once, up to 94 models;
 * - a constant (mean, or drift when d + D = 1) is tried on and off;
 * - models whose AR or MA roots come within 1.01 of the unit circle, or whose coefficient
 *   covariance has a negative variance, are refused;
 * - with the approximation (by default for n > 150 or m > 12) the search compares CSS fits
 *   through an approximate AICc (with an offset from the white-noise likelihood), then refits the
 *   best candidates by maximum likelihood in order until one succeeds.
 */
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

  if (m === 1) {
    maxSP = 0;
    maxSQ = 0;
  }
  const differencing = chooseDifferencing(x, xreg, m, opts.maxD ?? 2, opts.maxSD ?? 1);
  const { d, D } = differencing;
  if (isConstant(differencing.dx)) return constantDifferencesModel(x, differencing, xreg, m);

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
  let best: Candidate;
  const orders = (pp: number, qq: number, PP: number, QQ: number): ArmaOrders => ({ p: pp, d, q: qq, P: PP, D, Q: QQ, m });
  const tryModel = (pp: number, qq: number, PP: number, QQ: number, c: boolean): Candidate => {
    // Every model after the first is kept only if it beats the best so far.
    const fit = scoreModel(x, orders(pp, qq, PP, QQ), c, ic, approximation, offset, xreg, trace, results.length > 0 ? best.ic : Infinity);
    results.push({ p: pp, q: qq, P: PP, Q: QQ, constant: c, ic: fit.ic });
    return fit;
  };
  const isNew = (pp: number, qq: number, PP: number, QQ: number, c: boolean) =>
    !results.some((r) => r.p === pp && r.q === qq && r.P === PP && r.Q === QQ && r.constant === c);

  best = tryModel(p, q, P, Q, constant);
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
    // Refit the candidates by maximum likelihood, best approximate criterion first. R walks the
    // whole list until one refit succeeds; maxRefits stops the walk sooner, and then the best
    // approximate fit stands, as in R when no refit succeeds.
    const order = results.map((_, i) => i).sort((a, b) => compareIc(results[a].ic, results[b].ic) || a - b);
    for (const i of order.slice(0, opts.maxRefits ?? order.length)) {
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
