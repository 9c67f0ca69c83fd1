/**
 * The one small surface every model family implements.
 *
 * Statistical models are *local*: each series is fitted on its own history, so the engine can
 * spread tasks over worker threads. Global and foundation models (later) see a whole batch.
 */

/** Covariate kinds of the API reference's support table (section 1). */
export type CovariateKind = 'historical' | 'future' | 'static' | 'string' | 'generated';

export interface ModelCapabilities {
  /** Covariate kinds the model consumes; an empty list means none. */
  readonly covariates: readonly CovariateKind[];
  /** Longest history the model looks at; null when unlimited. */
  readonly maxContext: number | null;
  /** True when the model needs exported weights (foundation models). */
  readonly needsWeights: boolean;
  /** True when the model learns across the series of a request. */
  readonly global: boolean;
}

/** One forecasting task: a history already sliced to its context, and what to predict. */
export interface ForecastTask {
  /** Target history, oldest first; finite numbers. */
  readonly history: Float64Array;
  readonly horizon: number;
  /** Requested quantile levels, each strictly between 0 and 1. */
  readonly quantiles: readonly number[];
  /** Resolved seasonal period (>= 1): from model_config or the frequency's default. */
  readonly seasonLength: number;
}

export interface ForecastOutput {
  /** Point forecast (the predictive mean), one value per horizon step. */
  readonly mean: Float64Array;
  /** One array per requested level, in the order of `ForecastTask.quantiles`. */
  readonly quantiles: Float64Array[];
}

/** A model fitted independently on every series (naive, ETS, ARIMA). */
export interface LocalModel {
  readonly name: string;
  forecast(task: ForecastTask): ForecastOutput;
}

/**
 * Raised for a task the model cannot serve (too short a history, ...). The engine turns it into
 * a 422 naming the series; anything else a model throws is a genuine server fault.
 */
export class ModelInputError extends Error {
  override readonly name = 'ModelInputError';
}
