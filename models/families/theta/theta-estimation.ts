/**
 * The Theta method's state-space form (Fiorucci, Pellegrini, Louzada, Petropoulos and Koehler 2016)
 * as statsforecast's AutoTheta fits it: simple exponential smoothing plus (1 - 1/theta) times the
 * linear trend, fixed from the whole sample (STM, OTM) or updated as each observation arrives
 * (DSTM, DOTM); standard models keep theta = 2, optimised ones fit it. The variant with the smallest
 * criterion wins. Where it departs from the reference: docs/decisions/011-theta-follows-autotheta.md.
 */
import { nelderMead } from '../../numerics/bounded-nelder-mead.ts';

export type ThetaVariant = 'STM' | 'OTM' | 'DSTM' | 'DOTM';
export const THETA_VARIANTS: readonly ThetaVariant[] = ['STM', 'OTM', 'DSTM', 'DOTM'];

const isDynamic = (v: ThetaVariant) => v === 'DSTM' || v === 'DOTM';
const fitsTheta = (v: ThetaVariant) => v === 'OTM' || v === 'DOTM';

export interface ThetaParameters {
  initialSmoothed: number;
  alpha: number;
  theta: number;
}

/** The model's state after an observation: smoothed level, running mean, trend intercept and slope. */
export interface ThetaState {
  level: number;
  meanY: number;
  a: number;
  b: number;
}

export interface ThetaFit {
  variant: ThetaVariant;
  parameters: ThetaParameters;
  /** The selection criterion: sum of squared one-step errors after the first three, over mean |y|. */
  mse: number;
  /** One-step errors, the first being y[0] less the initial state's forecast. */
  residuals: Float64Array;
  /** The state after the last observation. */
  last: ThetaState;
  n: number;
}

/** One-step forecast from the state after observation i - 1 (the model's mu at time i, 0-based). */
export function oneStep(s: ThetaState, i: number, p: ThetaParameters): number {
  const decay = 1 - p.alpha;
  return oneStepWith(s, p, Math.pow(decay, i), Math.pow(decay, i + 1));
}

/**
 * oneStep given (1 - alpha)^i and (1 - alpha)^(i + 1): a pass over the series hands each step's
 * second power to the next step as its first, the same value from the same call, so the filter
 * inside the optimiser raises one power a step instead of two.
 */
function oneStepWith(s: ThetaState, p: ThetaParameters, decayToI: number, decayToNext: number): number {
  const { alpha, theta } = p;
  return s.level + (1 - 1 / theta) * (s.a * decayToI + (s.b * (1 - decayToNext)) / alpha);
}

/** Takes in observation y at time i (>= 1); the trend is re-estimated only by dynamic models. */
export function advance(s: ThetaState, i: number, y: number, alpha: number, dynamic: boolean): void {
  const previousMean = s.meanY;
  s.level = alpha * y + (1 - alpha) * s.level;
  s.meanY = (i * previousMean + y) / (i + 1);
  if (dynamic) {
    s.b = ((i - 1) * s.b + (6 * (y - previousMean)) / (i + 1)) / (i + 2);
    s.a = s.meanY - (s.b * (i + 2)) / 2;
  }
}

/** The state after y[0] and the forecast of y[0] from before it. */
function initialState(y: Float64Array, variant: ThetaVariant, p: ThetaParameters): { state: ThetaState; mu0: number } {
  const { initialSmoothed, alpha, theta } = p;
  const level = alpha * y[0] + (1 - alpha) * initialSmoothed;
  if (isDynamic(variant)) return { state: { level, meanY: y[0], a: y[0], b: 0 }, mu0: y[0] };
  // Least-squares line through (t, y_t), t = 1..n.
  const n = y.length;
  let sum = 0;
  let weighted = 0;
  for (let t = 0; t < n; t++) {
    sum += y[t];
    weighted += y[t] * (t + 1);
  }
  const mean = sum / n;
  const b = (6 * ((2 * weighted) / n - (n + 1) * mean)) / (n * n - 1);
  const a = mean - ((n + 1) * b) / 2;
  return { state: { level, meanY: y[0], a, b }, mu0: initialSmoothed + (1 - 1 / theta) * (a + b) };
}

/**
 * Runs the model over the series: the criterion (the mean squared one-step error after the first
 * three, over the series' mean absolute value), the residuals (when asked) and the last state. One
 * pass: the reference recomputes multi-step forecasts at every step for a statistic it does not use.
 */
export function filter(y: Float64Array, variant: ThetaVariant, p: ThetaParameters, residuals?: Float64Array): { mse: number; state: ThetaState } {
  const dynamic = isDynamic(variant);
  const { state, mu0 } = initialState(y, variant, p);
  if (residuals) residuals[0] = y[0] - mu0;
  let squares = 0;
  const decay = 1 - p.alpha;
  let decayToI = Math.pow(decay, 1);
  for (let i = 1; i < y.length; i++) {
    const decayToNext = Math.pow(decay, i + 1);
    const e = y[i] - oneStepWith(state, p, decayToI, decayToNext);
    decayToI = decayToNext;
    if (residuals) residuals[i] = e;
    if (i >= 3) squares += e * e;
    advance(state, i, y[i], p.alpha, dynamic);
  }
  let meanAbs = 0;
  for (const v of y) meanAbs += Math.abs(v);
  meanAbs = Math.max(meanAbs / y.length, 1e-10);
  return { mse: squares / meanAbs, state };
}

/** Mean forecasts: each step's one-step forecast taken in as if it were observed. */
export function forecastMean(fit: ThetaFit, horizon: number): Float64Array {
  const s = { ...fit.last };
  const out = new Float64Array(horizon);
  for (let j = 0; j < horizon; j++) {
    const i = fit.n + j;
    out[j] = oneStep(s, i, fit.parameters);
    advance(s, i, out[j], fit.parameters.alpha, isDynamic(fit.variant));
  }
  return out;
}

// The reference's box: alpha in [0.1, 0.99], theta >= 1, the initial level anywhere within 1e10.
const LEVEL_BOUND = 1e10;
const ALPHA_BOUNDS = [0.1, 0.99] as const;
const THETA_BOUNDS = [1, 1e10] as const;

/** Fits one variant from the reference's start: initial level y[0]/2, alpha 0.5, theta 2. */
export function fitVariant(y: Float64Array, variant: ThetaVariant): ThetaFit {
  const withTheta = fitsTheta(variant);
  const start = withTheta ? [y[0] / 2, 0.5, 2] : [y[0] / 2, 0.5];
  const lower = Float64Array.from(withTheta ? [-LEVEL_BOUND, ALPHA_BOUNDS[0], THETA_BOUNDS[0]] : [-LEVEL_BOUND, ALPHA_BOUNDS[0]]);
  const upper = Float64Array.from(withTheta ? [LEVEL_BOUND, ALPHA_BOUNDS[1], THETA_BOUNDS[1]] : [LEVEL_BOUND, ALPHA_BOUNDS[1]]);
  const toParameters = (x: Float64Array): ThetaParameters => ({ initialSmoothed: x[0], alpha: x[1], theta: withTheta ? x[2] : 2 });
  const objective = (x: Float64Array) => {
    const { mse } = filter(y, variant, toParameters(x));
    // A numerically broken fit is the worst point, never the best.
    return Number.isNaN(mse) ? Infinity : Math.max(mse, -1e10);
  };
  const { x } = nelderMead(objective, Float64Array.from(start), { lower, upper });
  return fitWith(y, variant, toParameters(x));
}

/** The variant with given parameters run over y: its criterion, residuals and last state. */
export function fitWith(y: Float64Array, variant: ThetaVariant, parameters: ThetaParameters): ThetaFit {
  const residuals = new Float64Array(y.length);
  const { mse, state } = filter(y, variant, parameters, residuals);
  return { variant, parameters, mse, residuals, last: state, n: y.length };
}

/** Fits every variant and keeps the one with the smallest criterion; null when none is finite. */
export function selectTheta(y: Float64Array, variants: readonly ThetaVariant[] = THETA_VARIANTS): ThetaFit | null {
  let best: ThetaFit | null = null;
  for (const variant of variants) {
    const fit = fitVariant(y, variant);
    if (Number.isFinite(fit.mse) && (best === null || fit.mse < best.mse)) best = fit;
  }
  return best;
}
