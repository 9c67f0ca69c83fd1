import { predictArima, type ArimaFit, type Regressors } from './arima-estimation.ts';

/** What the automatic ARIMA search (search.ts) is asked, what it selects, and forecasts from its selection. */

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
  /** With the approximation, how many candidates may be refitted by maximum likelihood before the best approximate fit is kept (default: all, as R). */
  readonly maxRefits?: number;
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

export function driftColumn(n: number, from = 1): Float64Array {
  const c = new Float64Array(n);
  for (let i = 0; i < n; i++) c[i] = from + i;
  return c;
}

export function withDrift(n: number, xreg: Regressors | null | undefined): Regressors {
  return {
    names: ['drift', ...(xreg?.names ?? [])],
    columns: [driftColumn(n), ...(xreg?.columns ?? [])],
  };
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
