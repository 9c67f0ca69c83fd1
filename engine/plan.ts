import type { ModelEntry } from '../models/contract/model-registry.ts';
import type { ContextSeries, ForecastTask, TaskCovariates } from '../models/contract/model-interface.ts';
import type { CovariateGenerator, GeneratedColumns } from './covariates/generator.ts';
import { DEFAULT_SEASON_LENGTH, SEASONAL_CYCLES } from './frequencies.ts';
import { forecastIndex } from './predictions.ts';
import type { ForecastRequest, InputSerie } from './request-schema.ts';
import { taskSettings, type TaskSettings } from './task-settings.ts';
import { planTasks, type SeriesTimeline } from './series-timeline.ts';
import { couplesSeries, quantileLevels } from './tasks.ts';
import { scanIndex, wallClockMillis } from './time-index.ts';

/**
 * The stable front door's side of the one planner (series-timeline.ts): a validated request's
 * series as timelines, with their creation dates, times and covariates, and the planned tasks
 * read back as (series, forecast creation date) pairs.
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

export { historyWindow } from './series-timeline.ts';

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
 * Every (series, forecast creation date) to forecast; `only_as_context` series have none. Each
 * series becomes a timeline for the one planner (series-timeline.ts).
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
  // Only global models and generated covariates read timestamps; parsing every index entry is
  // skipped for the others.
  const needsTimes = model.capabilities.global || covariates !== null;
  const timelines: SeriesTimeline[] = [];
  request.series.forEach((s, seriesIndex) => {
    if (s.only_as_context) return;
    const times = needsTimes ? seriesTimes(s, request) : undefined;
    // Built once per series over its whole timeline (history and the latest date's horizon).
    const generated = covariates && times ? covariates.build(times) : undefined;
    const withCovariates = hasCovariates(s) || generated !== undefined;
    timelines.push({
      seriesIndex,
      values: Float64Array.from(s.target),
      points: creationDates(s),
      ...(refitFcds?.[seriesIndex] && { refitPoints: refitFcds[seriesIndex] }),
      ...(times && { times }),
      ...(withCovariates && { covariates: (from: number, to: number) => covariatesFor(s, from, to, request.horizon, generated) }),
    });
  });
  const plan = {
    horizon: request.horizon,
    quantiles: quantileLevels(request.quantiles),
    context: request.context,
    maxContext: model.capabilities.maxContext,
    settings: requestTaskSettings(request, model),
    refit: model.capabilities.reusesFit === true ? request.refit : 'every',
    freq: request.freq,
  };
  return planTasks(timelines, plan).map((p) => ({
    seriesIndex: timelines[p.timeline].seriesIndex,
    fcdPosition: p.position,
    fcd: p.point,
    task: p.task,
    refitted: p.refitted,
  }));
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
