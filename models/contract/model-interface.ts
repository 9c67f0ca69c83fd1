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
  /** True when the model takes several seasonal periods (ForecastTask.seasonLengths). */
  readonly multipleSeasons?: boolean;
  /** True when the model can keep its fitted parameters between backtest dates (LocalModel.reuse). */
  readonly reusesFit?: boolean;
  /**
   * True when the model computes without fitting, in a few arithmetic passes over the history:
   * a small interactive batch of it runs on the event loop (engine/threads/inline.ts).
   */
  readonly fitFree?: boolean;
  /**
   * For a global model, when the forecasts of different series depend on each other: always
   * (the default), only with cross-learning (model_config is_global), or only when the request
   * has covariates (a regression fitted across the series). Otherwise each series is
   * forecast from its own data, and the request may be split across threads and job chunks.
   */
  readonly couplesSeries?: 'always' | 'cross-learning' | 'covariates';
  /**
   * For a global model that combines other models' forecasts (the ensemble): its members fit on
   * the model threads, and it combines them on the event loop (engine/threads/pool.ts).
   */
  readonly combinesMembers?: boolean;
  /** True when the model forecasts a point alone, so that every requested quantile equals the mean. */
  readonly pointOnly?: boolean;
}

/** A covariate value: numbers for most models, strings (categories) for some. */
export type CovariateValue = number | string;

/**
 * Covariates of one task, already cut to what was known at its forecast creation date: a model
 * can never see a historical variable's values past the end of its history.
 */
export interface TaskCovariates {
  /** Historical-only variables, aligned with `history` (same length). */
  readonly hist: Readonly<Record<string, readonly CovariateValue[]>>;
  /** Variables known in advance, aligned with `history` then the horizon (length history + horizon). */
  readonly future: Readonly<Record<string, readonly CovariateValue[]>>;
  readonly static: Readonly<Record<string, CovariateValue>>;
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
  /**
   * Every seasonal period of the data, for models of several seasonalities (mstl): the caller's
   * list, else the frequency's natural cycles (hourly: 24 and 168). Absent: [seasonLength].
   */
  readonly seasonLengths?: readonly number[];
  /**
   * The model's own options from model_config (its registry entry's config spec, ModelConfigSpec):
   * read by that model alone, through its family's accessor. Absent: the model's defaults.
   */
  readonly options?: unknown;
  /** Position of the task's series in the request: tasks of one series share it. */
  readonly seriesIndex?: number;
  /** Epoch milliseconds (UTC wall clock of the index) of the history then the horizon steps. */
  readonly times?: Float64Array;
  /** The request's frequency code (`H`, `D`, `W`...; engine/frequencies.ts), when it has one. */
  readonly freq?: string;
  /** Present when the request gives covariates and the model takes them. */
  readonly covariates?: TaskCovariates;
  /** Present when the caller asks for conformal quantiles instead of the model's own (models/numerics/conformal.ts). */
  readonly conformal?: ConformalSettings;
  /**
   * Present in a backtest with a refit policy, for a model that can keep a fit: the history the
   * parameters are fitted on (the series' window at creation date `fcd`: this task's own at a
   * refit date, an earlier one between refits, whose observations since are only taken in).
   * `since`: how many observations this task's creation date is past `fcd` (0 at a refit date).
   */
  readonly refit?: { readonly fcd: number; readonly history: Float64Array; readonly since: number };
}

/** Conformal quantiles from `windows` rolling-origin forecasts of the history's last steps. */
export interface ConformalSettings {
  readonly windows: number;
}

/**
 * When a task's forecast is made: the time of its last history step (NaN without times). Models
 * that forecast tasks jointly learn nothing from values after a task's creation time, so that in
 * a backtest no forecast learns from another series' values after its own creation date:
 * cross-learning chronos-2 joins only tasks of one creation time, the ensemble's pools read only
 * windows known by then.
 */
export const creationTime = (task: ForecastTask): number => task.times?.[task.history.length - 1] ?? NaN;

/**
 * A series that informs a global model without being forecast (`only_as_context`), whole: a
 * global model backtesting at a creation date must use only the part up to that date's time.
 */
export interface ContextSeries {
  readonly seriesIndex: number;
  readonly values: Float64Array;
  readonly times: Float64Array;
  readonly covariates?: TaskCovariates;
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
  /**
   * For models that can keep fitted parameters between creation dates (a backtest's refit
   * policy): fit on a history, then forecast a (longer) history with those parameters. Fitting
   * is deterministic, so a reused fit equals a fresh one on the same history.
   */
  readonly reuse?: FitReuse<unknown>;
}

export interface FitReuse<Fitted> {
  fit(task: ForecastTask): Fitted;
  forecast(fitted: Fitted, task: ForecastTask): ForecastOutput;
}

/** Request-level settings of a global model (model_config). */
export interface GlobalBatchOptions {
  /** model_config's `is_global`: the series of a request are forecast jointly (cross-learning). */
  readonly crossLearning?: boolean;
  /** The model's own options from model_config (ModelConfigSpec); absent: its defaults. */
  readonly options?: unknown;
}

/** How an ensemble combines its members: equal, median, weighted per series or across a pool of series (models/families/ensemble/combine.ts). */
export type Combination = 'mean' | 'median' | 'weighted' | 'pooled';

/**
 * Where an ensemble's quantiles come from: `conformal`, the combination's own errors in the
 * validation windows; `members`, the members' own quantiles, each taken as an offset from its
 * mean and combined with the members' weights around the combined mean (on a series without a
 * season, the mixture of their distributions: member-mixture.ts); `pooled`, each series'
 * last-window errors, scaled and pooled across the request's series of one season and horizon
 * (models/families/ensemble/pooled-calibration.ts).
 */
export type EnsembleIntervals = 'conformal' | 'members' | 'pooled';

export interface EnsembleSettings {
  /** Member model names (local statistical models and svc-global); absent: by each series' profile (models/families/ensemble/ensemble.ts). */
  readonly members?: readonly string[];
  /** Absent: by each series' profile. */
  readonly combination?: Combination;
  /** Absent: by each series' profile. */
  readonly intervals?: EnsembleIntervals;
  /** Rolling-origin windows for the weights and the conformal quantiles. */
  readonly windows: number;
}

/**
 * A model that sees a whole request at once: it learns across series (svc-global) or runs a
 * network on a batch (foundation models). `context` holds the `only_as_context` series.
 */
export interface GlobalModel {
  readonly name: string;
  forecastBatch(tasks: readonly ForecastTask[], context: readonly ContextSeries[], options?: GlobalBatchOptions): Promise<ForecastOutput[]>;
  /** For a model run by ONNX Runtime: the execution provider its loaded session runs on; null before it is loaded. */
  readonly executionProvider?: () => string | null;
}

/**
 * What a model needs from the configuration of the process it runs in (worker threads receive
 * it through workerData): where exported weights are installed, and how many threads an ONNX
 * Runtime session may use.
 */
export interface ModelSettings {
  /** Exported foundation models, one folder per model name (models/families/foundation/model-store.ts). */
  readonly modelsDir: string;
  /** Intra-op threads of each ONNX Runtime session. */
  readonly onnxThreads: number;
  /** ONNX Runtime execution providers, in order; absent or null: the server chooses (models/families/foundation/execution-providers.ts). */
  readonly executionProviders?: readonly string[] | null;
}

/**
 * Raised for a task the model cannot serve (too short a history, ...). The engine turns it into
 * a 422 naming the series; anything else a model throws is a genuine server fault.
 */
export class ModelInputError extends Error {
  override readonly name = 'ModelInputError';
}

/**
 * Raised when a model cannot run on this server (its export is missing or broken, or its execution
 * provider cannot start). The message is the reason for the client, a clause that follows "model
 * 'x' is not available on this server: ", and names no server path; `operatorDetail` says what an
 * operator must fix, and goes to the server's log only.
 */
export class ModelUnavailableError extends Error {
  override readonly name: string = 'ModelUnavailableError';
  constructor(
    message: string,
    readonly operatorDetail: string,
  ) {
    super(message);
  }
}
