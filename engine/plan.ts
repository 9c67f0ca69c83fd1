import type { ModelEntry } from '../models/contract/model-registry.ts';
import type { ContextSeries, ForecastTask, TaskCovariates } from '../models/contract/model-interface.ts';
import type { CovariateGenerator, GeneratedColumns } from './covariates/generator.ts';
import { DEFAULT_SEASON_LENGTH, SEASONAL_CYCLES } from './frequencies.ts';
import { forecastIndex } from './predictions.ts';
import type { ForecastRequest, InputSerie } from './request-schema.ts';
import { taskSettings, type TaskSettings } from './task-settings.ts';
import { couplesSeries, quantileLevels, refitDates } from './tasks.ts';
import { scanIndex, wallClockMillis } from './time-index.ts';

/**
 * The stable pipeline's planner: every (series, forecast creation date) of a validated request
 * as a task for the forecast core (tasks.ts), each with the history, covariates and times known
 * at its creation date.
 */

/** One forecast to make: series i at its j-th forecast creation date k. */
export interface PlannedForecast {
  seriesIndex: number;
  fcdPosition: number;
  /** Number of observations of history (the forecast creation date as an index). */
  fcd: number;
  task: ForecastTask;
  /** False where the model keeps parameters fitted at an earlier date (the request's refit policy). */
  refitted: boolean;
}

/** What the request's model_config means for the model's tasks (engine/task-settings.ts). */
export const requestTaskSettings = (request: ForecastRequest, model: ModelEntry): TaskSettings =>
  taskSettings(request.model_config, model, { season: DEFAULT_SEASON_LENGTH[request.freq], seasons: SEASONAL_CYCLES[request.freq] });

const hasCovariates = (s: InputSerie) =>
  Object.keys(s.hist_variables).length + Object.keys(s.future_variables).length + Object.keys(s.static_variables).length > 0;

/** Whether this request's forecasts of different series depend on each other (see ModelCapabilities). */
export function seriesAreCoupled(request: ForecastRequest, model: ModelEntry): boolean {
  return couplesSeries(model, {
    crossLearning: requestTaskSettings(request, model).batch.crossLearning === true,
    covariates: Boolean(request.covariates?.length) || request.series.some(hasCovariates),
  });
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

/**
 * Covariates a forecast may see: historical values up to its creation date only, future values
 * through its horizon. Arrays are aligned with the index from its first entry. Generated
 * columns are cut by the same rule as the caller's variables of their kind.
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

/** Wall-clock times of the whole index and of the steps past its end that any forecast reaches. */
function seriesTimes(s: InputSerie, request: ForecastRequest): Float64Array {
  const last = Math.max(...creationDates(s)) + request.horizon;
  const n = s.index.length;
  if (last <= n) return wallClockTimes(s.index);
  const times = new Float64Array(last);
  times.set(scannedWallClock(s.index));
  const future = forecastIndex(s, n, last - n, request.freq);
  for (let i = 0; i < future.length; i++) times[n + i] = wallClockMillis(future[i]);
  return times;
}

/** The index's wall-clock times, from validation's scan of it when there was one (shared: read only). */
function scannedWallClock(index: readonly string[]): Float64Array {
  const scanned = scanIndex(index);
  if (!scanned.valid) index.forEach(wallClockMillis); // throws, naming the entry
  return scanned.wallClock;
}

/** A copy of the index's wall-clock times, the caller's own. */
const wallClockTimes = (index: readonly string[]): Float64Array => scannedWallClock(index).slice();

/**
 * Every (series, forecast creation date) to forecast; `only_as_context` series have none.
 * `covariates` is the request's generator, resolved when it was validated (model-checks.ts).
 * `refitFcds`: each series' creation dates in the whole request, for a job chunk that holds only
 * some of them (the refit policy counts dates over all of them); the request's own by default.
 */
export function planForecasts(
  request: ForecastRequest,
  model: ModelEntry,
  covariates: CovariateGenerator | null,
  refitFcds?: readonly (readonly number[])[],
): PlannedForecast[] {
  const quantiles = quantileLevels(request.quantiles);
  const { season, seasonLengths, options, conformal } = requestTaskSettings(request, model);
  const reusesFit = model.capabilities.reusesFit === true && request.refit !== 'every';
  // Only global models and generated covariates read timestamps; parsing every index entry is
  // skipped for the others.
  const needsTimes = model.capabilities.global || covariates !== null;
  const out: PlannedForecast[] = [];
  request.series.forEach((s, seriesIndex) => {
    if (s.only_as_context) return;
    const target = Float64Array.from(s.target);
    const times = needsTimes ? seriesTimes(s, request) : undefined;
    // Built once per series over its whole timeline (history and the latest date's horizon).
    const generated = covariates && times ? covariates.build(times) : undefined;
    const withCovariates = hasCovariates(s) || generated !== undefined;
    const anchors = reusesFit ? refitDates(refitFcds?.[seriesIndex] ?? creationDates(s), request.refit) : null;
    creationDates(s).forEach((fcd, fcdPosition) => {
      const [from, to] = historyWindow(fcd, request.context, model.capabilities.maxContext);
      // Under a refit policy every date names the fit it uses, its own included, so that the
      // fit made at a refit date is the one the dates after it keep (models cache it by date).
      const anchor = anchors?.get(fcd) ?? fcd;
      const fitWindow = anchors ? historyWindow(anchor, request.context, model.capabilities.maxContext) : undefined;
      const task: ForecastTask = {
        history: target.subarray(from, to),
        horizon: request.horizon,
        quantiles,
        seasonLength: season,
        ...(seasonLengths && { seasonLengths }),
        ...(options !== undefined && { options }),
        seriesIndex,
        freq: request.freq,
        ...(conformal && { conformal }),
        ...(fitWindow && { refit: { fcd: anchor, history: target.subarray(fitWindow[0], fitWindow[1]), since: fcd - anchor } }),
        ...(times && { times: times.subarray(from, to + request.horizon) }),
        ...(withCovariates && { covariates: covariatesFor(s, from, to, request.horizon, generated) }),
      };
      out.push({ seriesIndex, fcdPosition, fcd, task, refitted: anchor === fcd });
    });
  });
  return out;
}

/** The `only_as_context` series, whole, for global models. */
export function contextSeries(request: ForecastRequest, covariates: CovariateGenerator | null): ContextSeries[] {
  return request.series.flatMap((s, seriesIndex) => {
    if (!s.only_as_context) return [];
    const times = wallClockTimes(s.index);
    const generated = covariates?.build(times);
    const withCovariates = hasCovariates(s) || generated !== undefined;
    return [
      {
        seriesIndex,
        values: Float64Array.from(s.target),
        times,
        ...(withCovariates && { covariates: covariatesFor(s, 0, s.target.length, request.horizon, generated) }),
      },
    ];
  });
}
