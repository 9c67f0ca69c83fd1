/**
 * Worker-thread entry: runs models off the event loop. A call carries a batch of tasks for one
 * model, so that messaging costs little next to fitting: a share of a local model's tasks, or a
 * global model's whole request. The model settings arrive in workerData.
 */
import { workerData } from 'node:worker_threads';
import { conformalForecast } from '../../models/conformal.ts';
import { modelEntry } from '../../models/registry.ts';
import {
  ModelInputError,
  type ContextSeries,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
  type LocalModel,
  type ModelSettings,
} from '../../models/types.ts';

/** What every model thread is started with (pool.ts). */
export interface ThreadData {
  /** The module the bootstrap loads: this one. */
  taskModule: string;
  models: ModelSettings;
}

export interface ThreadBatch {
  model: string;
  tasks: ForecastTask[];
  /** Set for global models: the request's `only_as_context` series. */
  context?: ContextSeries[];
  options?: GlobalBatchOptions;
}

/** A task's forecast or failure, with the seconds the model spent on it in the thread (a global model's batch shared out evenly). */
export type ThreadResult = ({ ok: true; mean: Float64Array; quantiles: Float64Array[] } | { ok: false; inputError: boolean; message: string }) & {
  seconds: number;
};

const settings = (workerData as ThreadData).models;
const loaded = new Map<string, Promise<LocalModel | GlobalModel>>();

function load(name: string): Promise<LocalModel | GlobalModel> {
  let model = loaded.get(name);
  if (!model) {
    const entry = modelEntry(name);
    if (entry?.loadLocal) model = entry.loadLocal();
    else if (entry?.loadGlobal) model = entry.loadGlobal(settings);
    else throw new Error(`model ${name} has no implementation on this server`);
    loaded.set(name, model);
  }
  return model;
}

const failure = (err: unknown, seconds: number): ThreadResult => ({
  ok: false,
  inputError: err instanceof ModelInputError,
  message: err instanceof Error ? err.message : String(err),
  seconds,
});
const success = (out: ForecastOutput, seconds: number): ThreadResult => ({ ok: true, mean: out.mean, quantiles: out.quantiles, seconds });
const since = (start: number) => (performance.now() - start) / 1000;

export default async function runBatch(batch: ThreadBatch): Promise<ThreadResult[]> {
  const model = await load(batch.model);
  if ('forecastBatch' in model) {
    const start = performance.now();
    const share = () => since(start) / Math.max(1, batch.tasks.length);
    try {
      const outputs = await model.forecastBatch(batch.tasks, batch.context ?? [], batch.options);
      const seconds = share();
      return outputs.map((out) => success(out, seconds));
    } catch (err) {
      // A global model fails as a whole: every task reports the same cause.
      const seconds = share();
      return batch.tasks.map(() => failure(err, seconds));
    }
  }
  // A backtest's kept fits, by series and refit date: one batch holds a series' dates in order.
  const fits = new Map<string, unknown>();
  const forecast = (task: ForecastTask): ForecastOutput => {
    if (!task.refit || !model.reuse) return model.forecast(task);
    const key = `${task.seriesIndex}@${task.refit.fcd}`;
    if (!fits.has(key)) fits.set(key, model.reuse.fit({ ...task, history: task.refit.history, refit: undefined }));
    return model.reuse.forecast(fits.get(key), task);
  };
  return batch.tasks.map((task) => {
    const start = performance.now();
    try {
      const out = task.conformal ? conformalForecast(forecast, task, task.conformal.windows) : forecast(task);
      return success(out, since(start));
    } catch (err) {
      return failure(err, since(start));
    }
  });
}
