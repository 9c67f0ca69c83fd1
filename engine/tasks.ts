import type { ModelEntry } from '../models/contract/model-registry.ts';
import type { ContextSeries, ForecastOutput, ForecastTask, GlobalBatchOptions } from '../models/contract/model-interface.ts';
import type { Engine } from './engine.ts';
import { EngineError, type FieldRef } from './errors.ts';
import { modelUnavailable } from './model-checks.ts';
import type { RefitPolicy } from './request-schema.ts';
import type { Lane } from './threads/queue-order.ts';
import type { ThreadResult } from './threads/batch.ts';
import { runInline, runsInline } from './threads/inline.ts';
import { forecasts, modelBatchDuration, modelFitDuration } from '../telemetry/prometheus-metrics.ts';

/**
 * The forecast core that the stable and the beta pipelines share: the rules every task is made by
 * (quantile levels, season length, which tasks a model couples), and the one runner that sends
 * tasks to the model threads and checks what comes back. The pipelines differ only in how they
 * plan tasks from their inputs and how they shape the answer.
 */

/** The reference's default quantiles (2.1). */
export const DEFAULT_QUANTILES = [0.1, 0.9, 0.4, 0.5];

/** The levels to predict: the requested ones, or the default when the request gives none (null). */
export const quantileLevels = (requested: readonly number[] | null | undefined): readonly number[] => requested ?? DEFAULT_QUANTILES;

/**
 * The seasonal period a model is given: the caller's (model_config), else the model's own default
 * (its registry entry's), else the data's natural cycle for its frequency.
 */
export function seasonLength(model: Pick<ModelEntry, 'defaultSeasonLength'>, configured: number | null, natural: number): number {
  if (configured !== null) return configured;
  return model.defaultSeasonLength ?? natural;
}

/**
 * The creation date whose fit each of a series' dates uses, under the request's refit policy:
 * in date order, every date (`every`), the first (`once`), or every n-th from the first.
 */
export function refitDates(fcds: readonly number[], policy: RefitPolicy): Map<number, number> {
  const sorted = [...new Set(fcds)].sort((a, b) => a - b);
  const every = policy === 'every' ? 1 : policy === 'once' ? Infinity : policy;
  const anchors = new Map<number, number>();
  sorted.forEach((fcd, i) => anchors.set(fcd, sorted[i - (i % every)]));
  return anchors;
}

/** What makes a model learn across a call's series (see ModelCapabilities.couplesSeries). */
export interface CouplingCues {
  /** Chronos-2's is_global. */
  readonly crossLearning: boolean;
  /** The call gives covariates, caller-supplied or generated. */
  readonly covariates: boolean;
}

/** Whether the forecasts of different series depend on each other: then they run together. */
export function couplesSeries(model: ModelEntry, cues: CouplingCues): boolean {
  if (!model.capabilities.global) return false;
  switch (model.capabilities.couplesSeries ?? 'always') {
    case 'always':
      return true;
    case 'cross-learning':
      return cues.crossLearning;
    case 'covariates':
      return cues.covariates;
  }
}

export interface TaskBatch {
  readonly model: ModelEntry;
  readonly tasks: ForecastTask[];
  /** Coupled tasks run as one batch on one thread, with the context series. */
  readonly coupled: boolean;
  /** `only_as_context` series, for a model that couples series. */
  readonly context?: ContextSeries[];
  readonly options?: GlobalBatchOptions;
  readonly lane: Lane;
}

/** How errors name one task of a batch. */
export interface TaskLabel {
  /** The forecast in a failure: "series 3 at forecast creation date 40". */
  readonly forecast: string;
  /** What the caller must fix when the model refuses the task: "series 3". */
  readonly subject: string;
  /** The field a refusal points at, and its message there, given the model's reason. */
  readonly field: FieldRef;
  readonly fieldMessage: (reason: string) => string;
}

/** A plain loop: a typed array's every() with a callback costs more than the check. */
function allFinite(values: Float64Array): boolean {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) return false;
  return true;
}

/** A batch's time and its forecasts' outcomes, for GET /metrics. */
function recordBatch(model: string, seconds: number, results: readonly ThreadResult[]): void {
  modelBatchDuration.observe({ model }, seconds);
  for (const r of results) modelFitDuration.observe({ model }, r.seconds);
  const refused = results.filter((r) => !r.ok && r.inputError).length;
  const failed = results.filter((r) => !r.ok && !r.inputError).length;
  forecasts.inc({ model, outcome: 'ok' }, results.length - refused - failed);
  if (refused > 0) forecasts.inc({ model, outcome: 'refused' }, refused);
  if (failed > 0) forecasts.inc({ model, outcome: 'failed' }, failed);
}

/**
 * Past this magnitude a square, or a sum of squares, of a series' values overflows a double: a
 * model's non-finite answer to such values is the values' doing (a 422), as other models' refusals
 * of them are, not a failure of the service.
 */
const OVERFLOWING_MAGNITUDE = 1e150;

function largestMagnitude(values: ArrayLike<number>): number {
  let largest = 0;
  for (let i = 0; i < values.length; i++) largest = Math.max(largest, Math.abs(values[i]));
  return largest;
}

/**
 * Forecasts every task, in order, on the model threads (or, for the few batches cheaper to run
 * than to send, on the event loop: threads/inline.ts). A task the model refuses (ModelInputError: too short a history,
 * ...) is an `invalid_request` at its label's field; a model that cannot run here (its export
 * gone, its execution provider unable to start) is `model_unavailable`; any other failure, and a
 * non-finite value (but for values past OVERFLOWING_MAGNITUDE), is `forecast_failed`: a model never
 * hands back a forecast the caller cannot use.
 */
export async function runTasks(engine: Engine, batch: TaskBatch, label: (task: number) => TaskLabel): Promise<ForecastOutput[]> {
  const { model, tasks } = batch;
  const started = performance.now();
  const results = model.capabilities.combinesMembers
    ? await engine.threads.runCombining(model.name, tasks, batch.context ?? [], batch.options ?? {}, batch.lane)
    : model.loadGlobal
      ? await engine.threads.runGlobal(model.name, tasks, batch.context ?? [], batch.options ?? {}, batch.coupled, batch.lane)
      : runsInline(model.name, tasks, batch.lane)
        ? await runInline(model.name, tasks)
        : await engine.threads.runLocal(model.name, tasks, batch.lane);
  recordBatch(model.name, (performance.now() - started) / 1000, results);
  /** The model's refusal of a task's data: an `invalid_request` at the task's field. */
  const refusal = (at: TaskLabel, message: string) =>
    new EngineError('invalid_request', `model '${model.name}' cannot forecast ${at.subject}: ${message}`, [{ ...at.field, message: at.fieldMessage(message) }]);
  return results.map((result, i) => {
    if (!result.ok) {
      const at = label(i);
      if (result.inputError) throw refusal(at, result.message);
      if (result.unavailable) throw modelUnavailable(model.name, result.message, engine.settings.models, result.unavailable.operatorDetail);
      throw new EngineError('forecast_failed', `model '${model.name}' failed on ${at.forecast}: ${result.message}`);
    }
    if (!allFinite(result.mean) || !result.quantiles.every(allFinite)) {
      const largest = largestMagnitude(tasks[i].history);
      if (largest >= OVERFLOWING_MAGNITUDE)
        throw refusal(label(i), `${model.name} could not fit values as large as ${largest.toPrecision(3)}: its arithmetic overflows past about 1e150`);
      throw new EngineError('forecast_failed', `model '${model.name}' produced non-finite values for ${label(i).forecast}`);
    }
    return { mean: result.mean, quantiles: result.quantiles };
  });
}
