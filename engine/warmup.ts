import { requireRunnableModel } from './model-checks.ts';
import { runLocalTasks, workerThreads } from './worker-pool.ts';

/**
 * Loads a model ahead of traffic: starts the worker threads and has each load the model's code
 * by forecasting a tiny series. Returns how long that took.
 */
export async function warmUpModel(name: string): Promise<{ model: string; loadTimeMs: number }> {
  const model = requireRunnableModel(name);
  const started = performance.now();
  const probe = { history: Float64Array.from({ length: 8 }, (_, i) => 10 + (i % 2)), horizon: 1, quantiles: [0.5], seasonLength: 1 };
  await Promise.all(Array.from({ length: workerThreads() }, () => runLocalTasks(model.name, [probe])));
  return { model: model.name, loadTimeMs: performance.now() - started };
}
