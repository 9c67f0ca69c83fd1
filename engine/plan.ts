import type { ModelEntry } from '../models/registry.ts';
import type { ContextSeries, ForecastTask, GlobalBatchOptions, TaskCovariates } from '../models/types.ts';
import { covariateGenerator, type CovariateGenerator, type GeneratedColumns } from './covariates/generate.ts';
import { DEFAULT_SEASON_LENGTH } from './frequencies.ts';
import { forecastIndex } from './predictions.ts';
import { DEFAULT_QUANTILES, type ForecastRequest, type InputSerie } from './request-schema.ts';
import { wallClockMillis } from './time-index.ts';

/** One forecast to make: series i at its j-th forecast creation date k. */
export interface PlannedForecast {
  seriesIndex: number;
  fcdPosition: number;
  /** Number of observations of history (the forecast creation date as an index). */
  fcd: number;
  task: ForecastTask;
}

export function requestedQuantiles(request: ForecastRequest): number[] {
  return request.quantiles ?? DEFAULT_QUANTILES;
}

/** model_config's season_length, else the model's own default (naive: 1), else the frequency's. */
export function resolveSeasonLength(request: ForecastRequest, model: string): number {
  const configured = request.model_config && 'season_length' in request.model_config.config ? request.model_config.config.season_length : null;
  if (configured != null) return configured;
  return model === 'naive' ? 1 : DEFAULT_SEASON_LENGTH[request.freq];
}

/** What a global model reads from model_config: Chronos-2's is_global. */
export function globalBatchOptions(request: ForecastRequest): GlobalBatchOptions {
  const config = request.model_config?.config;
  return { crossLearning: config !== undefined && 'is_global' in config && config.is_global };
}

/** Whether this request's forecasts of different series depend on each other (see ModelCapabilities). */
export function seriesAreCoupled(request: ForecastRequest, model: ModelEntry): boolean {
  if (!model.capabilities.global) return false;
  switch (model.capabilities.couplesSeries ?? 'always') {
    case 'always':
      return true;
    case 'cross-learning':
      return globalBatchOptions(request).crossLearning === true;
    case 'covariates':
      return Boolean(request.covariates?.length) || request.series.some(hasCovariates);
  }
}

/** `fcds: null` means one forecast from the end of the target. */
export const creationDates = (s: InputSerie): number[] => s.fcds ?? [s.target.length];

/**
 * History each forecast sees: the `context` observations before its creation date. With no
 * `context`, the shorter of the model's maximum context and the available history.
 */
export function historyWindow(fcd: number, context: number | null, maxContext: number | null): [number, number] {
  const length = Math.min(fcd, context ?? maxContext ?? fcd, maxContext ?? Infinity);
  return [fcd - length, fcd];
}

const hasCovariates = (s: InputSerie) =>
  Object.keys(s.hist_variables).length + Object.keys(s.future_variables).length + Object.keys(s.static_variables).length > 0;

/**
 * Covariates a forecast may see: historical values up to its creation date only, future values
 * through its horizon. Arrays are aligned with the index from its first entry. Generated
 * columns (engine/covariates) are cut by the same rule as the caller's variables of their kind.
 */
function covariatesFor(s: InputSerie, from: number, to: number, horizon: number, generated?: GeneratedColumns): TaskCovariates {
  const cut = (vars: Record<string, (number | string)[]>, end: number) => Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, v.slice(from, end)]));
  const cutGenerated = (cols: Record<string, Float64Array> | undefined, end: number) =>
    Object.fromEntries(Object.entries(cols ?? {}).map(([k, v]) => [k, Array.from(v.subarray(from, end))]));
  return {
    hist: { ...cut(s.hist_variables, to), ...cutGenerated(generated?.hist, to) },
    future: { ...cut(s.future_variables, to + horizon), ...cutGenerated(generated?.future, to + horizon) },
    static: s.static_variables,
  };
}

/** The request's generated covariates, or null when it asks for none. */
const generatorFor = (request: ForecastRequest): CovariateGenerator | null => (request.covariates?.length ? covariateGenerator(request) : null);

/** Wall-clock times of the whole index and of the steps past its end that any forecast reaches. */
function seriesTimes(s: InputSerie, request: ForecastRequest): Float64Array {
  const last = Math.max(...creationDates(s)) + request.horizon;
  const index = last > s.index.length ? s.index.concat(forecastIndex(s, s.index.length, last - s.index.length, request.freq)) : s.index;
  return wallClockTimes(index);
}

/** A plain loop: Float64Array.from with a map function is several times slower on long indexes. */
function wallClockTimes(index: readonly string[]): Float64Array {
  const times = new Float64Array(index.length);
  for (let i = 0; i < index.length; i++) times[i] = wallClockMillis(index[i]);
  return times;
}

/** Every (series, forecast creation date) to forecast; `only_as_context` series have none. */
export function planForecasts(request: ForecastRequest, model: ModelEntry): PlannedForecast[] {
  const quantiles = requestedQuantiles(request);
  const seasonLength = resolveSeasonLength(request, model.name);
  const generator = generatorFor(request);
  // Only global models and generated covariates read timestamps; parsing every index entry is
  // skipped for the others.
  const needsTimes = model.capabilities.global || generator !== null;
  const out: PlannedForecast[] = [];
  request.series.forEach((s, seriesIndex) => {
    if (s.only_as_context) return;
    const target = Float64Array.from(s.target);
    const times = needsTimes ? seriesTimes(s, request) : undefined;
    // Built once per series over its whole timeline (history and the latest date's horizon).
    const generated = generator && times ? generator.build(times) : undefined;
    const withCovariates = hasCovariates(s) || generated !== undefined;
    creationDates(s).forEach((fcd, fcdPosition) => {
      const [from, to] = historyWindow(fcd, request.context, model.capabilities.maxContext);
      const task: ForecastTask = {
        history: target.subarray(from, to),
        horizon: request.horizon,
        quantiles,
        seasonLength,
        seriesIndex,
        freq: request.freq,
        ...(times && { times: times.subarray(from, to + request.horizon) }),
        ...(withCovariates && { covariates: covariatesFor(s, from, to, request.horizon, generated) }),
      };
      out.push({ seriesIndex, fcdPosition, fcd, task });
    });
  });
  return out;
}

/** The `only_as_context` series, whole, for global models. */
export function contextSeries(request: ForecastRequest): ContextSeries[] {
  const generator = request.series.some((s) => s.only_as_context) ? generatorFor(request) : null;
  return request.series.flatMap((s, seriesIndex) => {
    if (!s.only_as_context) return [];
    const times = wallClockTimes(s.index);
    const generated = generator?.build(times);
    const covariates = hasCovariates(s) || generated ? covariatesFor(s, 0, s.target.length, request.horizon, generated) : undefined;
    return [{ seriesIndex, values: Float64Array.from(s.target), times, ...(covariates && { covariates }) }];
  });
}
