/**
 * Worker-thread entry: fits local models off the event loop. Each call carries a batch of
 * tasks for one model, so that messaging costs little next to fitting.
 */
import { modelEntry } from '../models/registry.ts';
import { ModelInputError, type ForecastTask, type LocalModel } from '../models/types.ts';

export interface WorkerBatch {
  model: string;
  tasks: ForecastTask[];
}

export type WorkerResult =
  | { ok: true; mean: Float64Array; quantiles: Float64Array[] }
  | { ok: false; inputError: boolean; message: string };

const loaded = new Map<string, Promise<LocalModel>>();

function load(name: string): Promise<LocalModel> {
  let model = loaded.get(name);
  if (!model) {
    const entry = modelEntry(name);
    if (!entry?.loadLocal) throw new Error(`model ${name} has no local implementation`);
    model = entry.loadLocal();
    loaded.set(name, model);
  }
  return model;
}

export default async function runBatch(batch: WorkerBatch): Promise<WorkerResult[]> {
  const model = await load(batch.model);
  return batch.tasks.map((task) => {
    try {
      const out = model.forecast(task);
      return { ok: true, mean: out.mean, quantiles: out.quantiles };
    } catch (err) {
      return { ok: false, inputError: err instanceof ModelInputError, message: err instanceof Error ? err.message : String(err) };
    }
  });
}
