/**
 * Vocabulary shared by the ETS kernel: which components a model has, and what a fit leaves behind.
 *
 * Component kinds are small integers (not strings) because the likelihood recursion branches on
 * them thousands of times per fit; the codes follow R forecast's C kernel (N=0, A=1, M=2).
 */

export const NONE = 0;
export const ADDITIVE = 1;
export const MULTIPLICATIVE = 2;

export type ErrorKind = typeof ADDITIVE | typeof MULTIPLICATIVE;
export type TrendKind = typeof NONE | typeof ADDITIVE;
export type SeasonKind = typeof NONE | typeof ADDITIVE | typeof MULTIPLICATIVE;

/** One ETS structure: ETS(error, trend[d], season). */
export interface EtsSpec {
  readonly error: ErrorKind;
  readonly trend: TrendKind;
  readonly season: SeasonKind;
  readonly damped: boolean;
}

/** Smoothing parameters; beta/gamma are 0 and phi is 1 when the component is absent. */
export interface SmoothingParams {
  readonly alpha: number;
  readonly beta: number;
  readonly gamma: number;
  readonly phi: number;
}

/**
 * A fitted model, reduced to what forecasting needs.
 *
 * `lastState` uses R's state layout `[l, b?, s1..sm]` where s1 is the most recent seasonal
 * index and sm the one used by the next observation; the analytic variance formulas are
 * written against that layout.
 */
export interface EtsFit {
  readonly spec: EtsSpec;
  /** Seasonal period of the fitted model (1 when non-seasonal). */
  readonly m: number;
  readonly params: SmoothingParams;
  readonly lastState: Float64Array;
  /** Innovation variance: additive errors in data units, multiplicative ones relative. */
  readonly sigma2: number;
  /** -2 log-likelihood up to a constant, as R's `lik` (NaN for the Holt-Winters fallbacks). */
  readonly lik: number;
  readonly aicc: number;
  /** R's method label, e.g. "ETS(M,Ad,M)". */
  readonly method: string;
}

const LETTER = ['N', 'A', 'M'] as const;

export function specName(spec: EtsSpec): string {
  return `ETS(${LETTER[spec.error]},${LETTER[spec.trend]}${spec.damped ? 'd' : ''},${LETTER[spec.season]})`;
}
