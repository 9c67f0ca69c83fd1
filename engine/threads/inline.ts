import { modelEntry } from '../../models/contract/model-registry.ts';
import type { ForecastTask, LocalModel } from '../../models/contract/model-interface.ts';
import { runLocalBatch, type ThreadResult } from './batch.ts';
import type { Lane } from './queue-order.ts';

/**
 * The one exception to "models run on the model threads": a batch so cheap that handing it to a
 * thread costs more than running it (docs/decisions/035-cheap-forecasts-on-the-event-loop.md). The event loop
 * runs a batch itself when all three hold:
 *
 * - the model computes without fitting (its registry entry's `capabilities.fitFree`); every model
 *   that fits parameters, however small the series, runs on a thread;
 * - the batch is an interactive request's, never a job's chunk (background work stays where the
 *   thread queue can order it behind interactive requests);
 * - its work, counted as values read and written (taskWork), is within INLINE_WORK_LIMIT, which
 *   keeps the event loop's share below what parsing that request's body took.
 */

export const INLINE_WORK_LIMIT = 20_000;

/** Values a cheap model reads and writes for a task: the history, and the mean and each quantile over the horizon; per conformal window too. */
export function taskWork(task: ForecastTask): number {
  const once = task.history.length + task.horizon * (task.quantiles.length + 1);
  return task.conformal ? once * (task.conformal.windows + 1) : once;
}

export function runsInline(model: string, tasks: readonly ForecastTask[], lane: Lane): boolean {
  if (lane !== 'interactive' || modelEntry(model)?.capabilities.fitFree !== true) return false;
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
