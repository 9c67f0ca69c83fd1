import type { Engine } from './engine.ts';
import { EngineError } from './errors.ts';
import { requireRunnableModel } from './model-checks.ts';

/**
 * Loads a model ahead of traffic: starts the model threads and has each load the model's code by
 * forecasting a tiny series. Returns how long that took. For a foundation model this checks the
 * installed export (its checksum is computed once per file) and creates the ONNX Runtime session
 * that later requests reuse; a model that fails to load is `model_unavailable`, saying why.
 */
export async function warmUpModel(engine: Engine, name: string): Promise<{ model: string; loadTimeMs: number }> {
  const model = requireRunnableModel(name, engine.settings.models);
  const started = performance.now();
  const probe = { history: Float64Array.from({ length: 8 }, (_, i) => 10 + (i % 2)), horizon: 1, quantiles: [0.5], seasonLength: 1 };
  const results = await Promise.all(
    Array.from({ length: engine.threads.size }, () =>
      model.loadGlobal ? engine.threads.runGlobal(model.name, [probe], []) : engine.threads.runLocal(model.name, [probe]),
    ),
  );
  const failed = results.flat().find((r) => !r.ok);
  if (model.capabilities.needsWeights && failed && !failed.ok) {
    const message = `model '${name}' is installed but could not be loaded: ${failed.message}`;
    throw new EngineError('model_unavailable', message, [{ root: 'model', path: [], message }]);
  }
  return { model: model.name, loadTimeMs: performance.now() - started };
}
