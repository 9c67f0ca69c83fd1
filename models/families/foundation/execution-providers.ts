/**
 * Which ONNX Runtime execution provider the sessions of this thread run on.
 *
 * - Automatic (ONNX_EXECUTION_PROVIDERS unset): CUDA when onnxruntime-node's CUDA provider is
 *   installed and a probe session starts on it, else the CPU.
 * - Configured: exactly the providers named, in order. One that cannot start is an error naming
 *   it, never a silent run on the CPU.
 *
 * Why, and why CUDA alone is chosen unasked: docs/decisions/072-execution-provider-choice.md and
 * 073-execution-provider-override.md.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ModelUnavailableError } from '../../contract/model-interface.ts';

export interface ProviderChoice {
  /** What sessions are created with, most preferred first. */
  readonly sessionProviders: readonly string[];
  /** The provider the graph runs on: the first of them (ONNX Runtime places on the CPU only what it cannot run). */
  readonly provider: string;
  /** True when the server chose (no ONNX_EXECUTION_PROVIDERS): a model that fails on the accelerator may fall back to the CPU. */
  readonly automatic: boolean;
}

export const CPU_ONLY: ProviderChoice = { sessionProviders: ['cpu'], provider: 'cpu', automatic: true };

/**
 * The accelerated providers chosen unasked, with the library onnxruntime-node's install step puts
 * beside its binding. Only where that library is present is a probe worth its cost: a failed probe
 * makes ONNX Runtime print an error of its own.
 */
const AUTOMATIC: readonly { name: string; library: Partial<Record<NodeJS.Platform, string>> }[] = [
  { name: 'cuda', library: { linux: 'libonnxruntime_providers_cuda.so', win32: 'onnxruntime_providers_cuda.dll' } },
];

/** Raised when a provider the configuration names cannot start here; the client hears the provider, the log hears why. */
export class ExecutionProviderUnavailableError extends ModelUnavailableError {
  override readonly name = 'ExecutionProviderUnavailableError';
}

/** onnxruntime-node's native folder for this platform, where it keeps the providers it installs. */
function bindingFolder(): string {
  const entry = createRequire(import.meta.url).resolve('onnxruntime-node');
  return path.join(path.dirname(entry), '..', 'bin', 'napi-v6', process.platform, process.arch);
}

function libraryInstalled(library: string | undefined): boolean {
  if (!library) return false;
  try {
    return fs.existsSync(path.join(bindingFolder(), library));
  } catch {
    return false;
  }
}

/** Protocol-buffer fields, enough to write the probe graph below. */
const varint = (value: number): number[] => {
  const out: number[] = [];
  for (let v = value; ; v >>>= 7) {
    if (v < 0x80) return [...out, v];
    out.push((v & 0x7f) | 0x80);
  }
};
const field = (number: number, value: number): number[] => [...varint(number << 3), ...varint(value)];
const bytes = (number: number, content: number[] | string): number[] => {
  const data = typeof content === 'string' ? [...Buffer.from(content, 'utf8')] : content;
  return [...varint((number << 3) | 2), ...varint(data.length), ...data];
};

/** A float tensor of one element: TypeProto { tensor_type { elem_type FLOAT, shape [1] } }. */
const ONE_FLOAT = bytes(1, [...field(1, 1), ...bytes(2, bytes(1, field(1, 1)))]);

/**
 * The smallest model that exercises a provider: y = x + x on one float (ONNX IR 7, opset 13). It
 * is written here rather than shipped as a file, so the production build needs no asset.
 */
export const PROBE_GRAPH = Uint8Array.from([
  ...field(1, 7),
  ...bytes(8, field(2, 13)),
  ...bytes(7, [
    ...bytes(1, [...bytes(1, 'x'), ...bytes(1, 'x'), ...bytes(2, 'y'), ...bytes(4, 'Add')]),
    ...bytes(2, 'probe'),
    ...bytes(11, [...bytes(1, 'x'), ...bytes(2, ONE_FLOAT)]),
    ...bytes(12, [...bytes(1, 'y'), ...bytes(2, ONE_FLOAT)]),
  ]),
]);

/**
 * Whether a provider starts here: null when it does, else ONNX Runtime's reason. Probed once per
 * provider and thread, a failure included: a provider installed later takes a restart, as native
 * libraries do, and a client retrying does not make ONNX Runtime print its error again.
 */
const probes = new Map<string, Promise<string | null>>();

export function probeProvider(name: string): Promise<string | null> {
  let probe = probes.get(name);
  if (!probe) {
    probe = (async () => {
      // Loaded here, not at the top: a process that never asks keeps ONNX Runtime out of its memory.
      const ort = await import('onnxruntime-node');
      try {
        const session = await ort.InferenceSession.create(PROBE_GRAPH, { executionProviders: [name] });
        await session.release();
        return null;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    })();
    probes.set(name, probe);
  }
  return probe;
}

/** The choice for a configuration (ModelSettings.executionProviders): checked once per thread. */
const choices = new Map<string, Promise<ProviderChoice>>();

export function chooseProviders(configured: readonly string[] | null | undefined): Promise<ProviderChoice> {
  const key = configured?.join(',') ?? '';
  let choice = choices.get(key);
  if (!choice) {
    choice = configured?.length ? configuredChoice(configured) : automaticChoice();
    // Handled by every caller; this only keeps a refusal from counting as unhandled.
    choice.catch(() => undefined);
    choices.set(key, choice);
  }
  return choice;
}

async function configuredChoice(configured: readonly string[]): Promise<ProviderChoice> {
  for (const name of configured.filter((n) => n !== 'cpu')) {
    const failure = await probeProvider(name);
    if (failure !== null) {
      throw new ExecutionProviderUnavailableError(
        `it is set to run on the ${name} execution provider, which cannot start on this server`,
        `ONNX_EXECUTION_PROVIDERS names ${name}, which ONNX Runtime cannot start here: ${failure}. Install that provider, or unset ONNX_EXECUTION_PROVIDERS to let the server choose (docs/foundation-models.md, "Execution providers").`,
      );
    }
  }
  return { sessionProviders: configured, provider: configured[0], automatic: false };
}

async function automaticChoice(): Promise<ProviderChoice> {
  for (const candidate of AUTOMATIC) {
    if (libraryInstalled(candidate.library[process.platform]) && (await probeProvider(candidate.name)) === null) {
      return { sessionProviders: [candidate.name, 'cpu'], provider: candidate.name, automatic: true };
    }
  }
  return CPU_ONLY;
}

/**
 * The provider this thread's sessions would run on. A configured one is taken at its word here:
 * whether it starts is checked when a session is made (warm-up, or the first forecast).
 */
export async function expectedProvider(configured: readonly string[] | null | undefined): Promise<string> {
  return configured?.length ? configured[0] : (await chooseProviders(null)).provider;
}
