/**
 * The last check of an install: the model is loaded as a model thread loads it (its registry
 * entry's loader: the manifest, the checksum, an ONNX Runtime session on the configured execution
 * provider) and forecasts a small series, as GET /warmup has each thread do.
 */
import { modelEntry } from '../contract/model-registry.ts';
import { ModelUnavailableError, type ForecastTask, type ModelSettings } from '../contract/model-interface.ts';
import { InstallError, messageOf } from './install-error.ts';

export interface WarmUp {
  readonly ms: number;
  /** The execution provider the session runs on; null for a model not run by ONNX Runtime. */
  readonly provider: string | null;
}

const PROBE: ForecastTask = {
  history: Float64Array.from({ length: 48 }, (_, i) => 100 + 10 * Math.sin((2 * Math.PI * i) / 12) + (i % 3)),
  horizon: 12,
  quantiles: [0.1, 0.5, 0.9],
  seasonLength: 12,
};

/** Loads `name` from `settings.modelsDir` and forecasts the probe; an error says what failed. */
export async function warmUp(name: string, settings: ModelSettings): Promise<WarmUp> {
  const entry = modelEntry(name);
  if (!entry?.loadGlobal) throw new InstallError(`${name} has no loader of exported weights on this server`);
  const started = performance.now();
  try {
    const model = await entry.loadGlobal(settings);
    const [output] = await model.forecastBatch([PROBE], []);
    const values = [output.mean, ...output.quantiles];
    if (output.mean.length !== PROBE.horizon || values.some((v) => v.some((x) => !Number.isFinite(x)))) {
      throw new Error(`its forecast of a ${PROBE.history.length}-step series is not ${PROBE.horizon} finite values`);
    }
    return { ms: performance.now() - started, provider: model.executionProvider?.() ?? null };
  } catch (error) {
    const detail = error instanceof ModelUnavailableError ? error.operatorDetail : messageOf(error);
    throw new InstallError(`the exported ${name} failed its warm-up: ${detail}; nothing was installed`);
  }
}
