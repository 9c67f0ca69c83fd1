import type { ModelEntry } from '../models/registry.ts';
import type { ForecastTask } from '../models/types.ts';
import { DEFAULT_SEASON_LENGTH } from './frequencies.ts';
import { DEFAULT_QUANTILES, type ForecastRequest, type InputSerie } from './request-schema.ts';

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

/** Every (series, forecast creation date) to forecast; `only_as_context` series have none. */
export function planForecasts(request: ForecastRequest, model: ModelEntry): PlannedForecast[] {
  const quantiles = requestedQuantiles(request);
  const seasonLength = resolveSeasonLength(request, model.name);
  const out: PlannedForecast[] = [];
  request.series.forEach((s, seriesIndex) => {
    if (s.only_as_context) return;
    const target = Float64Array.from(s.target);
    creationDates(s).forEach((fcd, fcdPosition) => {
      const [from, to] = historyWindow(fcd, request.context, model.capabilities.maxContext);
      out.push({ seriesIndex, fcdPosition, fcd, task: { history: target.subarray(from, to), horizon: request.horizon, quantiles, seasonLength } });
    });
  });
  return out;
}
