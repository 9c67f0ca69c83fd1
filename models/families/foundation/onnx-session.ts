/**
 * ONNX Runtime sessions, created once per installed model file and reused by every request on
 * this thread. A model re-installed under the same name (a new file: another size, time or
 * checksum) gets a new session on its next use; the old one is released.
 */
import * as ort from 'onnxruntime-node';
import type { ContextSeries, ForecastOutput, ForecastTask, GlobalBatchOptions, GlobalModel, ModelSettings } from '../../contract/model-interface.ts';
import { requireInstalled, type FoundationName, type InstalledModel, type ManifestOf } from './model-store.ts';

export type Feeds = Record<string, ort.Tensor>;

/** Runs an exported network on one batch of inputs. */
export type Runner = (feeds: Feeds) => Promise<ort.InferenceSession.OnnxValueMapType>;

interface CachedSession {
  fingerprint: string;
  session: Promise<ort.InferenceSession>;
}

const sessions = new Map<string, CachedSession>();

/** `threads`: intra-op threads (ONNX_THREADS; by default each model thread's share of the cores). */
export function sessionFor(model: InstalledModel, threads: number): Promise<ort.InferenceSession> {
  const cached = sessions.get(model.name);
  if (cached && cached.fingerprint === model.fingerprint) return cached.session;
  if (cached) void cached.session.then((s) => s.release()).catch(() => undefined);
  const session = ort.InferenceSession.create(model.onnxPath, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const entry = { fingerprint: model.fingerprint, session };
  // A failed load is not cached: the next request tries again (the file may have been replaced).
  session.catch(() => sessions.get(model.name) === entry && sessions.delete(model.name));
  sessions.set(model.name, entry);
  return session;
}

export function float32(data: Float32Array, dims: number[]): ort.Tensor {
  return new ort.Tensor('float32', data, dims);
}

export function int64(data: BigInt64Array, dims: number[]): ort.Tensor {
  return new ort.Tensor('int64', data, dims);
}

export function bool(data: Uint8Array, dims: number[]): ort.Tensor {
  return new ort.Tensor('bool', data, dims);
}

/** The float32 data of an output, checked against the shape the adapter expects. */
export function output(outputs: ort.InferenceSession.OnnxValueMapType, name: string, dims: number[]): Float32Array {
  const tensor = outputs[name];
  if (!tensor) throw new Error(`the ONNX model has no output '${name}'; re-export it with tools/export/export.py`);
  if (tensor.type !== 'float32' || tensor.dims.length !== dims.length || tensor.dims.some((d, i) => d !== dims[i])) {
    throw new Error(
      `the ONNX model's output '${name}' is ${tensor.type}[${tensor.dims.join(', ')}], expected float32[${dims.join(', ')}]; re-export it with tools/export/export.py`,
    );
  }
  return tensor.data as Float32Array;
}

/**
 * A service model backed by its installed export (MODELS_DIR/<name>), checked on every batch so
 * a re-installed model is picked up and a removed one fails clearly; the session is reused.
 */
export function onnxModel<N extends FoundationName>(
  name: N,
  settings: ModelSettings,
  forecast: (
    run: Runner,
    manifest: ManifestOf<N>,
    tasks: readonly ForecastTask[],
    context: readonly ContextSeries[],
    options: GlobalBatchOptions,
  ) => Promise<ForecastOutput[]>,
): GlobalModel {
  return {
    name,
    async forecastBatch(tasks, context, options = {}) {
      const installed = requireInstalled(name, settings.modelsDir);
      const session = await sessionFor(installed, settings.onnxThreads);
      return forecast((feeds) => session.run(feeds), installed.manifest, tasks, context, options);
    },
  };
}
