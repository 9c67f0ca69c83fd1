/**
 * Fitting and choosing a CES variant, as statsforecast 2.1.1's `cesmodel` and `auto_ces` do it
 * (normal errors): the free smoothing parameters minimise n log(SSE) of the backfitted one-step
 * errors (recursion.ts) by the bounded Nelder-Mead statsforecast shares between Theta and CES
 * (models/numerics/bounded-nelder-mead.ts), then the model is rerun at the optimum. `auto_ces` fits
 * N, S, P and F (only N without a usable season) and keeps the smallest AICc.
 */
import { nelderMead } from '../../numerics/bounded-nelder-mead.ts';
import { fittedCount, initialStates, LOWER, pairwiseSum, startingParameters, UPPER } from './initial.ts';
import { cescalc, COMPONENTS, forecastFrom, NA, scratchFor, type CesParameters, type CesVariant, type StateMatrix } from './recursion.ts';

export interface CesFit {
  variant: CesVariant;
  /** The lag of the states: the season length, 1 for N. */
  m: number;
  parameters: CesParameters;
  /** n log(SSE) of the final pass (the reference's `lik`); NaN when the recursion failed. */
  lik: number;
  aic: number;
  aicc: number;
  bic: number;
  /** Residual variance, SSE / (n - k - 2) with k state components (the reference's `sigma2`). */
  sigma2: number;
  /** One-step errors of the final forward pass, oldest first. */
  residuals: Float64Array;
  /** The final pass's states, n + 2m rows (rows n .. n + m - 1 start the forecast). */
  states: StateMatrix;
  n: number;
}

const reversed = (y: Float64Array) => y.slice().reverse();

/** Parameters with the optimiser's vector written over the free ones, in the order a0, a1, b0, b1. */
function withFree(start: CesParameters, variant: CesVariant, x: ArrayLike<number>): CesParameters {
  const free = fittedCount(variant);
  return {
    alpha0: x[0],
    alpha1: x[1],
    beta0: free >= 3 ? x[2] : start.beta0,
    beta1: free >= 4 ? x[3] : start.beta1,
  };
}

/** The optimiser's view of a parameter vector: `ces_target_fn`, failures mapped as the reference maps them. */
function objective(y: Float64Array, variant: CesVariant, init: StateMatrix, start: CesParameters): (x: Float64Array) => number {
  const yReversed = reversed(y);
  const states: StateMatrix = { ...init, values: init.values.slice() };
  const top = init.values.subarray(0, init.m * init.k);
  const e = new Float64Array(y.length);
  const scratch = scratchFor(states);
  return (x) => {
    // Only the first m rows are read before being written: resetting them restarts the filter.
    states.values.set(top);
    let lik = cescalc(y, yReversed, states, withFree(start, variant, x), e, scratch);
    // The reference's own mapping: a failed (NaN or NA) fit scores -Infinity, which a minimiser
    // takes for the best value. We keep it: the selection then discards such a variant (NaN AICc).
    if (lik < -1e10) lik = -1e10;
    if (Number.isNaN(lik)) lik = -Infinity;
    if (Math.abs(lik - NA) < 1e-7) lik = -Infinity;
    return lik;
  };
}

/**
 * `pegelsresid` plus `cesmodel`'s criteria: the model at fixed parameters. This is also the whole
 * of a kept fit's work between backtest refits (the reference's `forward_ces`): new initial
 * states from the new history, then the backfitted recursion.
 */
export function fitWith(y: Float64Array, m: number, variant: CesVariant, parameters: CesParameters): CesFit {
  const lags = variant === 'N' ? 1 : m;
  const states = initialStates(y, lags, variant);
  const n = y.length;
  const e = new Float64Array(n);
  let lik = cescalc(y, reversed(y), states, parameters, e, scratchFor(states));
  if (!Number.isNaN(lik) && Math.abs(lik - NA) < 1e-7) lik = NaN;
  const np = COMPONENTS[variant] + 1;
  const aic = lik + 2 * np;
  const bic = lik + Math.log(n) * np;
  const aicc = n - np - 1 !== 0 ? aic + (2 * np * (np + 1)) / (n - np - 1) : Infinity;
  const squares = e.map((v) => v * v);
  const sigma2 = pairwiseSum(squares) / (n - np - 1);
  return { variant, m: lags, parameters, lik, aic, aicc, bic, sigma2, residuals: e, states, n };
}

/** `cesmodel`: optimise the variant's free parameters from the reference's start, then rerun. */
export function fitVariant(y: Float64Array, m: number, variant: CesVariant): CesFit {
  const lags = variant === 'N' ? 1 : m;
  const init = initialStates(y, lags, variant);
  const start = startingParameters(variant);
  const free = fittedCount(variant);
  const x0 = Float64Array.from([start.alpha0, start.alpha1, start.beta0, start.beta1].slice(0, free));
  const { x } = nelderMead(objective(y, variant, init, start), x0, {
    lower: Float64Array.from(LOWER.slice(0, free)),
    upper: Float64Array.from(UPPER.slice(0, free)),
    initStep: 0.05,
    zeroPert: 1e-4,
    maxIter: 1000,
    tolStd: 1e-4,
  });
  return fitWith(y, m, variant, withFree(start, variant, x));
}

/** Whether the series can carry a season of length m: `auto_ces` needs m > 1 and two full cycles. */
export const usesSeason = (n: number, m: number) => m > 1 && n >= 2 * m;

/** The variants `auto_ces(model = 'Z')` tries, in its order (the first of equal AICc wins). */
export const candidates = (n: number, m: number): readonly CesVariant[] => (usesSeason(n, m) ? ['N', 'S', 'P', 'F'] : ['N']);

/**
 * Whether a variant has the observations to estimate its error variance (n > k + 2). The reference
 * fits such a variant anyway, with an infinite (n = k + 2) or negative (n < k + 2) variance, and
 * may choose it in the latter case; we leave it out, which only matters for a handful of points.
 */
export const estimable = (n: number, variant: CesVariant) => n - (COMPONENTS[variant] + 1) - 1 > 0;

/** `auto_ces`: the candidate with the smallest AICc, or null when none fits. */
export function selectCes(y: Float64Array, m: number): CesFit | null {
  let best: CesFit | null = null;
  for (const variant of candidates(y.length, m)) {
    if (!estimable(y.length, variant)) continue;
    const fit = fitVariant(y, m, variant);
    if (!Number.isNaN(fit.aicc) && fit.aicc < (best?.aicc ?? Infinity)) best = fit;
  }
  return best;
}

/** The mean forecast: `cesforecast` from the states after the last observation. */
export function forecastMean(fit: CesFit, h: number): Float64Array {
  const out = new Float64Array(h);
  forecastFrom(fit.states, fit.n + fit.m, fit.parameters, h, out);
  return out;
}
