import type { ForecastTask, TaskCovariates } from '../models/contract/model-interface.ts';
import type { RefitPolicy } from './request-schema.ts';
import type { TaskSettings } from './task-settings.ts';
import { refitDates } from './tasks.ts';

/**
 * The one planner of both front doors. A stable request's series and a beta query's (series,
 * target) pairs are first turned into neutral timelines: values on a regular step, the points at
 * which forecasts are made, and what a model may see around them. `planTasks` makes every task
 * from those: the history window, the refit anchor, the times and the covariates known at each
 * point. The front doors differ only in how they build timelines and read the answers back.
 */

/** One series as the planner sees it. */
export interface SeriesTimeline {
  /** Its position in the call: tasks of one timeline share it (fit caches, global models' grouping). */
  readonly seriesIndex: number;
  /** The observed values, oldest first; tasks take views of it, so it should be the series' own buffer. */
  readonly values: Float64Array;
  /** The forecast creation points: how many observations each forecast has seen, in the caller's order. */
  readonly points: readonly number[];
  /** Every creation point the refit policy counts, when the call holds only some of them (a job chunk); default `points`. */
  readonly refitPoints?: readonly number[];
  /** Wall-clock times of the values, then of the horizon past the last point; absent when no model reads them. */
  readonly times?: Float64Array;
  /** The covariates known at a point whose history window is [from, to); absent when the series has none. */
  readonly covariates?: (from: number, to: number) => TaskCovariates;
}

/** What every task of a call shares. */
export interface TimelinePlan {
  readonly horizon: number;
  readonly quantiles: readonly number[];
  /** Observations a forecast sees at most (the request's context); null for all of them. */
  readonly context: number | null;
  /** The model's own limit on its context; null for none. */
  readonly maxContext: number | null;
  /** What model_config means for the tasks: season, seasons, the model's options, conformal quantiles. */
  readonly settings: Pick<TaskSettings, 'season' | 'seasonLengths' | 'options' | 'conformal'>;
  /** The refit policy in effect: `every` unless the model keeps fits between points. */
  readonly refit: RefitPolicy;
  /** The frequency code the tasks carry (the stable API's `freq`), when the call has one. */
  readonly freq?: string;
}

/** One task, with where it comes from. */
export interface PlannedTask {
  /** The index of its timeline in the call. */
  readonly timeline: number;
  /** The index of its point among its timeline's points. */
  readonly position: number;
  /** Its creation point: observations seen. */
  readonly point: number;
  readonly task: ForecastTask;
  /** False where the model keeps parameters fitted at an earlier point (the refit policy). */
  readonly refitted: boolean;
}

/**
 * History each forecast sees: the `context` observations before its creation point. With no
 * `context`, the shorter of the model's maximum context and the available history.
 */
export function historyWindow(point: number, context: number | null, maxContext: number | null): [number, number] {
  const length = Math.min(point, context ?? maxContext ?? point, maxContext ?? Infinity);
  return [point - length, point];
}

/** Every task of the call, timeline by timeline, each timeline's points in its order. */
export function planTasks(timelines: readonly SeriesTimeline[], plan: TimelinePlan): PlannedTask[] {
  const { horizon, quantiles, context, maxContext, settings, refit } = plan;
  const out: PlannedTask[] = [];
  timelines.forEach((t, timeline) => {
    const anchors = refit === 'every' ? null : refitDates(t.refitPoints ?? t.points, refit);
    t.points.forEach((point, position) => {
      const [from, to] = historyWindow(point, context, maxContext);
      // Under a refit policy every point names the fit it uses, its own included, so that the
      // fit made at a refit point is the one the points after it keep (models cache it by point).
      const anchor = anchors?.get(point) ?? point;
      const fitWindow = anchors ? historyWindow(anchor, context, maxContext) : undefined;
      const task: ForecastTask = {
        history: t.values.subarray(from, to),
        horizon,
        quantiles,
        seasonLength: settings.season,
        ...(settings.seasonLengths && { seasonLengths: settings.seasonLengths }),
        ...(settings.options !== undefined && { options: settings.options }),
        seriesIndex: t.seriesIndex,
        ...(plan.freq !== undefined && { freq: plan.freq }),
        ...(settings.conformal && { conformal: settings.conformal }),
        ...(fitWindow && { refit: { fcd: anchor, history: t.values.subarray(fitWindow[0], fitWindow[1]), since: point - anchor } }),
        ...(t.times && { times: t.times.subarray(from, to + horizon) }),
        ...(t.covariates && { covariates: t.covariates(from, to) }),
      };
      out.push({ timeline, position, point, task, refitted: anchor === point });
    });
  });
  return out;
}
