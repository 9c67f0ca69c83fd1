import type { Engine } from './engine.ts';
import { EngineError } from './errors.ts';
import { modelUnavailable, requireRunnableModel } from './model-checks.ts';

/** A warmed model: how long loading took, and the execution provider its sessions run on (null: not run by ONNX Runtime). */
export interface WarmedModel {
  readonly model: string;
  readonly loadTimeMs: number;
  readonly executionProvider: string | null;
}

/**
 * Loads a model ahead of traffic: starts the model threads and has each load the model's code by
 * forecasting a tiny series (an ensemble also on the event loop, where requests combine it).
 * Returns how long that took. For a foundation model this checks the installed export (its
 * checksum is computed once per file) and creates the ONNX Runtime session that later requests
 * reuse, on the execution provider chosen or configured; a model that fails to load is
 * `model_unavailable`, saying why in words that name no server path.
 */
export async function warmUpModel(engine: Engine, name: string): Promise<WarmedModel> {
  const model = requireRunnableModel(name, engine.settings.models);
  const started = performance.now();
  const probe = { history: Float64Array.from({ length: 8 }, (_, i) => 10 + (i % 2)), horizon: 1, quantiles: [0.5], seasonLength: 1 };
  const onEachThread = Array.from({ length: engine.threads.size }, () =>
    model.loadGlobal ? engine.threads.runGlobal(model.name, [probe], []) : engine.threads.runLocal(model.name, [probe]),
  );
  // A model that combines others runs on the event loop too, handing its members to the threads
  // (tasks.ts): its copy there loads with the first request unless warmed the same way.
  const here = model.capabilities.combinesMembers ? [engine.threads.runCombining(model.name, [probe], [])] : [];
  const results = await Promise.all([...onEachThread, ...here]);
  const failed = results.flat().find((r) => !r.ok);
  if (failed && !failed.ok && failed.unavailable) throw modelUnavailable(name, failed.message, engine.settings.models, failed.unavailable.operatorDetail);
  if (model.capabilities.needsWeights && failed && !failed.ok) {
    const message = `model '${name}' is installed but could not be loaded: ${failed.message}`;
    throw new EngineError('model_unavailable', message, [{ root: 'model', path: [], message }]);
  }
  // Each thread has its own session; they agree unless one fell back to the CPU (execution-providers.ts).
  const providers = [...new Set(results.flat().flatMap((r) => (r.ok && r.executionProvider ? [r.executionProvider] : [])))].sort();
  return { model: model.name, loadTimeMs: performance.now() - started, executionProvider: providers.length ? providers.join(',') : null };
}
