/**
 * ONNX Runtime sessions, created once per installed model file and reused by every request on
 * this thread. A model re-installed under the same name (a new file: another size, time or
 * checksum) gets a new session on its next use; the old one is released. Each session records the
 * execution provider it runs on (execution-providers.ts). A model that cannot load is a
 * ModelUnavailableError whose message names no server path.
 */
import * as ort from 'onnxruntime-node';
import {
  ModelUnavailableError,
  type ContextSeries,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
  type ModelSettings,
} from '../../contract/model-interface.ts';
import { chooseProviders, CPU_ONLY, type ProviderChoice } from './execution-providers.ts';
import { requireInstalled, type FoundationName, type InstalledModel, type ManifestOf } from './model-store.ts';

export type Feeds = Record<string, ort.Tensor>;

/** Runs an exported network on one batch of inputs. */
export type Runner = (feeds: Feeds) => Promise<ort.InferenceSession.OnnxValueMapType>;

/** A loaded session and the execution provider it runs on. */
export interface LoadedSession {
  readonly session: ort.InferenceSession;
  readonly provider: string;
}

interface CachedSession {
  fingerprint: string;
  loaded: Promise<LoadedSession>;
}

const sessions = new Map<string, CachedSession>();

const create = (model: InstalledModel, threads: number, providers: readonly string[]) =>
  ort.InferenceSession.create(model.onnxPath, {
    executionProviders: [...providers],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The session on the chosen provider. Where the server chose an accelerator itself, a model that
 * fails to load on it (out of device memory, say) runs on the CPU instead, and records that.
 */
async function load(model: InstalledModel, threads: number, choice: ProviderChoice): Promise<LoadedSession> {
  try {
    return { session: await create(model, threads, choice.sessionProviders), provider: choice.provider };
  } catch (error) {
    if (choice.automatic && choice !== CPU_ONLY) return load(model, threads, CPU_ONLY);
    // ONNX Runtime's words name the file: they are for the operator.
    throw new ModelUnavailableError(
      `it is installed but could not be loaded on the ${choice.provider} execution provider`,
      `model '${model.name}' (${model.onnxPath}) could not be loaded on ${choice.sessionProviders.join(', ')}: ${messageOf(error)}`,
    );
  }
}

/** `threads`: intra-op threads (ONNX_THREADS; by default each model thread's share of the cores). `providers`: ONNX_EXECUTION_PROVIDERS. */
export function sessionFor(model: InstalledModel, threads: number, providers?: readonly string[] | null): Promise<LoadedSession> {
  const cached = sessions.get(model.name);
  if (cached && cached.fingerprint === model.fingerprint) return cached.loaded;
  if (cached) void cached.loaded.then((s) => s.session.release()).catch(() => undefined);
  const loaded = chooseProviders(providers).then((choice) => load(model, threads, choice));
  const entry = { fingerprint: model.fingerprint, loaded };
  // A failed load is not cached: the next request tries again (the file may have been replaced).
  loaded.catch(() => sessions.get(model.name) === entry && sessions.delete(model.name));
  sessions.set(model.name, entry);
  return loaded;
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
  let provider: string | null = null;
  return {
    name,
    async forecastBatch(tasks, context, options = {}) {
      const installed = requireInstalled(name, settings.modelsDir);
      const loaded = await sessionFor(installed, settings.onnxThreads, settings.executionProviders);
      provider = loaded.provider;
      return forecast((feeds) => loaded.session.run(feeds), installed.manifest, tasks, context, options);
    },
    executionProvider: () => provider,
  };
}
