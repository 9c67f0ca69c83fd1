import type { ModelEntry } from '../../models/contract/model-registry.ts';
import type { Engine } from '../engine.ts';
import { refuseField } from '../errors.ts';
import { planTasks, type SeriesTimeline } from '../series-timeline.ts';
import { couplesSeries, runTasks, type TaskBatch } from '../tasks.ts';
import { historicalCovariates, seriesName, type BacktestSettings, type PlannedCutoff } from './backtest.ts';
import { addDuration, isoTimestamp, type Duration } from './duration.ts';
import type { PreparedSeries } from './prepare.ts';

/**
 * In-sample residuals for min_trace's wls_var, mint_shrink and mint_cov, which models do not
 * expose (docs/decisions/062-one-step-residuals.md): for each (series, cutoff, target), the
 * one-step-ahead errors over the last `window` steps up to and including the cutoff. A model
 * that keeps fits (LocalModel.reuse) is fitted once, `window` steps before the cutoff, and
 * carried forward one observation at a time; any other model is refitted at every step. They are
 * ordinary tasks of horizon 1, so no model family knows about them.
 */

const RESIDUAL_FIELD = { root: 'request', path: ['reconciliation', 'residual_window'] } as const;

/** Residual tasks sent to the threads in one call, at most (unless the model couples series): they are many and small. */
const TASKS_PER_CALL = 8192;

/** One array of `window` residuals per (planned forecast, target), in plan order, targets innermost. */
export async function oneStepResiduals(
  engine: Engine,
  model: ModelEntry,
  settings: BacktestSettings,
  planned: readonly PlannedCutoff[],
  names: { identifiers: readonly string[]; targets: readonly string[] },
  window: number,
  lane: TaskBatch['lane'],
): Promise<Float64Array[]> {
  const targetCount = names.targets.length;
  for (const p of planned) {
    if (p.seen - window >= 1) continue;
    const message = `${seriesName(names.identifiers, p.series)} has ${p.seen} observations up to the cutoff ${isoTimestamp(p.cutoff)}; residual_window ${window} needs at least ${window + 1}`;
    throw refuseField(RESIDUAL_FIELD, message);
  }
  const withCovariates = planned.some((p) => p.series.covariates.length > 0);
  const coupled = couplesSeries(model, { crossLearning: settings.batch.crossLearning === true, covariates: withCovariates });
  // A model that learns across series sees them all at once; others get a slice at a time, so a chunk's tasks in flight stay few.
  const perCall = coupled ? planned.length : Math.max(1, Math.floor(TASKS_PER_CALL / (targetCount * window)));
  const residuals: Float64Array[] = [];
  for (let from = 0; from < planned.length; from += perCall) {
    const slice = planned.slice(from, from + perCall);
    const timelines = residualTimelines(slice, window, model.capabilities.global, settings.freq);
    const tasks = planTasks(timelines, {
      horizon: 1,
      quantiles: [0.5],
      context: settings.context,
      maxContext: model.capabilities.maxContext,
      // Conformal quantiles change no mean: the residuals skip their extra windows.
      settings: { season: settings.season, seasonLengths: settings.seasonLengths, options: settings.options },
      refit: model.capabilities.reusesFit ? 'once' : 'every',
    }).map((p) => p.task);
    const outputs = await runTasks(engine, { model, tasks, coupled, options: settings.batch, lane }, (i) => {
      const p = slice[Math.floor(i / (targetCount * window))];
      const step = p.seen - window + (i % window);
      const where = `${seriesName(names.identifiers, p.series)} at cutoff ${isoTimestamp(p.cutoff)}, target '${names.targets[Math.floor(i / window) % targetCount]}'`;
      const forecast = `the one-step forecast from step ${step} of ${where}`;
      return { forecast, subject: forecast, field: RESIDUAL_FIELD, fieldMessage: (reason) => `${forecast}: ${reason}` };
    });
    timelines.forEach((t, j) => {
      const first = t.points[0];
      residuals.push(Float64Array.from({ length: window }, (_, r) => t.values[first + r] - outputs[j * window + r].mean[0]));
    });
  }
  return residuals;
}

/** One timeline per (planned forecast, target): the `window` points before the cutoff's. Each series' values are copied once. */
function residualTimelines(planned: readonly PlannedCutoff[], window: number, global: boolean, freq: Duration): SeriesTimeline[] {
  const own = new Map<PreparedSeries, { values: Float64Array[]; times?: Float64Array }>();
  const timelines: SeriesTimeline[] = [];
  for (const p of planned) {
    const series = p.series;
    let copies = own.get(series);
    if (!copies) {
      // The series' own buffers: a task's view of a chunk's shared buffer would carry it to the threads whole.
      // A global model reads the times of the history and of the one step forecast.
      const times = global ? Float64Array.from({ length: series.length + 1 }, (_, k) => addDuration(series.start, freq, k)) : undefined;
      copies = { values: series.targets.map((v) => v.slice()), ...(times && { times }) };
      own.set(series, copies);
    }
    const covariates = series.covariates.length > 0 ? (from: number, to: number) => historicalCovariates(series, from, to)! : undefined;
    const points = Array.from({ length: window }, (_, r) => p.seen - window + r);
    for (const values of copies.values) {
      timelines.push({ seriesIndex: timelines.length, values, points, ...(copies.times && { times: copies.times }), ...(covariates && { covariates }) });
    }
  }
  return timelines;
}
