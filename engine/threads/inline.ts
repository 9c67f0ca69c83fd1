import { modelEntry } from '../../models/contract/model-registry.ts';
import type { ForecastTask, LocalModel } from '../../models/contract/model-interface.ts';
import { runLocalBatch, type ThreadResult } from './batch.ts';
import type { Lane } from './queue-order.ts';

/**
 * The one exception to "models run on the model threads": a batch so cheap that handing it to a
 * thread costs more than running it. Measured (BENCHMARKS.md, "Load"): a one-series naive
 * forecast takes about 8 µs to compute and about 70 µs to send to a thread and take back, and
 * while a job's chunks fill the threads it also waits for one (up to a chunk's fit, seconds).
 * So the event loop runs a batch itself when all three hold:
 *
 * - the model computes without fitting: a few arithmetic passes over the history (INLINE_MODELS);
 *   every model that fits parameters, however small the series, runs on a thread;
 * - the batch is an interactive request's, never a job's chunk (background work stays where the
 *   thread queue can order it behind interactive requests);
 * - its work, counted as values read and written (taskWork), is within INLINE_WORK_LIMIT, which
 *   holds the event loop at most about a quarter of a millisecond (20,000 values as one long
 *   series: 0.04 ms; as 119 short ones: 0.26 ms), less than parsing that request's body took.
 */

/** naive and seasonal-naive: one pass over the history for the residual spread, one over the horizon. */
export const INLINE_MODELS: ReadonlySet<string> = new Set(['naive', 'seasonal-naive']);

export const INLINE_WORK_LIMIT = 20_000;

/** Values a cheap model reads and writes for a task: the history, and the mean and each quantile over the horizon; per conformal window too. */
export function taskWork(task: ForecastTask): number {
  const once = task.history.length + task.horizon * (task.quantiles.length + 1);
  return task.conformal ? once * (task.conformal.windows + 1) : once;
}

export function runsInline(model: string, tasks: readonly ForecastTask[], lane: Lane): boolean {
  if (lane !== 'interactive' || !INLINE_MODELS.has(model)) return false;
  let work = 0;
  for (const task of tasks) {
    work += taskWork(task);
    if (work > INLINE_WORK_LIMIT) return false;
  }
  return true;
}

const loaded = new Map<string, Promise<LocalModel>>();

/** Runs the batch on the event loop, exactly as a model thread would (batch.ts). */
export async function runInline(name: string, tasks: readonly ForecastTask[]): Promise<ThreadResult[]> {
  let model = loaded.get(name);
  if (!model) {
    const load = modelEntry(name)?.loadLocal;
    if (!load) throw new Error(`model ${name} has no local implementation to run inline`);
    model = load();
    loaded.set(name, model);
  }
  return runLocalBatch(await model, tasks);
}
