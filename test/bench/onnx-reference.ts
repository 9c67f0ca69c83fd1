/**
 * The reference PyTorch pipelines the ONNX benchmark compares our adapters with, one Python
 * process per model (test/bench/peers/onnx-reference.py), each in the virtual environment of its
 * export module's requirements, installed on first use by scripts/ensure-onnx-reference.sh.
 *
 * Adding a foundation model to the benchmark is one entry of REFERENCES: the export module of
 * tools/export/ that builds it (`tiny_model(seed)`, `base_size_model(seed)`) and the requirements
 * file of its environment. The three first models' pipelines are called by the peer script itself;
 * a later model's export module provides `reference_forecast(model, histories, horizon)` (and
 * `reference_check(model, case)` to recompute its reference.json cases).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { FoundationName, InstalledModel } from '../../models/families/foundation/model-store.ts';

export interface ReferenceEntry {
  /** The export module in tools/export/ whose builders make the model. */
  readonly module: string;
  /** The module with `reference_forecast`, when not `module` itself. */
  readonly referenceModule?: string;
  /** Its environment's requirements file in tools/export/. */
  readonly requirements: string;
  /** The Python version that creates the environment, when the package needs another than python3's. */
  readonly python?: string;
}

export const REFERENCES: Partial<Record<FoundationName, ReferenceEntry>> = {
  'chronos-2': { module: 'chronos2', requirements: 'requirements.txt' },
  'timesfm-2p5': { module: 'timesfm2p5', requirements: 'requirements.txt' },
  'timesfm-2': { module: 'timesfm2', requirements: 'requirements-timesfm2.txt' },
  'moirai-2': { module: 'moirai2', requirements: 'requirements-moirai.txt' },
  'moirai-moe': { module: 'moirai_moe', referenceModule: 'moirai_moe_reference', requirements: 'requirements-moirai.txt' },
  'toto-2': { module: 'toto', requirements: 'requirements-toto.txt', python: '3.12' },
  'patchtst-fm': { module: 'patchtst_fm', requirements: 'requirements-patchtst-fm.txt' },
  tirex: { module: 'tirex_zero', requirements: 'requirements-tirex.txt' },
  'tirex-2': { module: 'tirex2_export', requirements: 'requirements-tirex2.txt' },
  // The reference's source is a repository snapshot, not a package: tools/export/README.md says where it goes.
  reverso: { module: 'reverso_export', requirements: 'requirements-reverso.txt' },
  // The benchmark's series have no timestamps: reference_forecast and the adapter both take them as hourly from 2024-01-01.
  tabicl: { module: 'tabicl_forecast', requirements: 'requirements-tabicl.txt' },
  // As tabicl: the benchmark's series are taken as hourly from 2024-01-01 on both sides.
  'tabpfn-ts': { module: 'tabpfn_ts', referenceModule: 'tabpfn_ts_reference', requirements: 'requirements-tabpfn-ts.txt' },
};

export interface ReferenceRequest {
  readonly histories: readonly Float64Array[];
  readonly horizon: number;
  readonly quantiles: readonly number[];
  /** The pipeline's batch sizes to warm up and time (its batch_size or per_core_batch_size: series, or Chronos-2's rows). */
  readonly batchSizes: readonly number[];
  readonly threads: number;
}

/** The reference.json check: recomputed cases and the worst relative error; null for base-size exports. */
export type Identity = { cases: string[]; values: number; worst: number } | null;

export interface ReferenceResult {
  readonly python: string;
  readonly versions: Record<string, string>;
  readonly identity: Identity;
  readonly mean: Float64Array[];
  /** [series][level][step], levels in the request's order. */
  readonly quantiles: Float64Array[][];
}

/** A reference pipeline in its own process, checked and warm, timing a pass over the set on request. */
export interface ReferenceProcess {
  readonly identity: Identity;
  /** Seconds of one pass over the whole set at the batch size. */
  time(batchSize: number): Promise<number>;
  /** Ends the process; the forecasts of its last pass. */
  finish(): Promise<ReferenceResult>;
}

const SCRIPT = new URL('./peers/onnx-reference.py', import.meta.url).pathname;
const ENSURE = new URL('../../scripts/ensure-onnx-reference.sh', import.meta.url).pathname;
/** The prefix of the peer's answers on its stdout (packages print there too). */
const MARK = '@@onnx-reference ';
const pythons = new Map<string, string>();

/** The environment's python for an entry's requirements, installing it on first use. */
export function referencePython(entry: ReferenceEntry): string {
  const args = [ENSURE, entry.requirements, ...(entry.python ? [entry.python] : [])];
  const key = args.join(' ');
  const known = pythons.get(key);
  if (known) return known;
  const ensured = spawnSync('bash', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (ensured.status !== 0)
    throw new Error(`the reference environment of tools/export/${entry.requirements} could not be installed (scripts/ensure-onnx-reference.sh)`);
  const python = ensured.stdout.trim();
  pythons.set(key, python);
  return python;
}

/**
 * The seed an export was built with, from its manifest's version (export.py writes
 * `tiny-random-seed-N` and `base-size-random-seed-N`); null for a real checkpoint, whose
 * reference the benchmark cannot rebuild.
 */
export function exportOrigin(model: InstalledModel): { size: 'tiny' | 'base'; seed: number } | null {
  const match = /^(tiny|base-size)-random-seed-(\d+)$/.exec(model.manifest.version);
  return match ? { size: match[1] === 'tiny' ? 'tiny' : 'base', seed: Number(match[2]) } : null;
}

/**
 * Starts the model's reference pipeline on the series: it rebuilds the model, checks it against
 * reference.json (it exits with an error if it is not the exported network) and warms up, then
 * waits for timing requests, so that the caller can interleave them with its own runs.
 */
export async function startReference(
  model: InstalledModel,
  entry: ReferenceEntry,
  request: ReferenceRequest,
  /** An existing environment's python (e.g. the export's own), instead of the cached one. */
  pythonOverride?: string,
): Promise<ReferenceProcess> {
  const origin = exportOrigin(model);
  if (!origin) throw new Error(`${model.name} ${model.manifest.version}: not a tiny or base-size random export, so its reference cannot be rebuilt`);
  const python = pythonOverride ?? referencePython(entry);
  const dir = mkdtempSync(join(tmpdir(), 'bench-onnx-reference-'));
  const requestFile = join(dir, 'request.json');
  const responseFile = join(dir, 'response.json');
  writeFileSync(
    requestFile,
    JSON.stringify({
      model: model.name,
      module: entry.module,
      reference_module: entry.referenceModule ?? entry.module,
      size: origin.size,
      seed: origin.seed,
      manifest: model.manifest,
      reference: origin.size === 'tiny' ? join(model.folder, 'reference.json') : null,
      histories: request.histories.map((h) => Array.from(h)),
      horizon: request.horizon,
      quantiles: request.quantiles,
      batch_sizes: request.batchSizes,
      threads: request.threads,
    }),
  );
  const threads = String(request.threads);
  const child = spawn(python, [SCRIPT, requestFile, responseFile], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, OMP_NUM_THREADS: threads, MKL_NUM_THREADS: threads, OPENBLAS_NUM_THREADS: threads, TOKENIZERS_PARALLELISM: 'false' },
  });
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) return resolve(); // `finish` reads the response, then removes the folder
      rmSync(dir, { recursive: true, force: true });
      reject(new Error(`${model.name}'s reference (${SCRIPT}) exited with ${signal ?? `code ${code}`}`));
    });
  });
  exited.catch(() => undefined); // observed through `answer` and `finish`
  // Marked lines are answers, in order; anything else the packages print goes to stderr.
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith(MARK)) waiting.shift()?.(line.slice(MARK.length));
    else process.stderr.write(`${line}\n`);
  });
  const answer = () =>
    Promise.race([
      new Promise<string>((resolve) => waiting.push(resolve)),
      exited.then(() => Promise.reject(new Error(`${model.name}'s reference ended early`))),
    ]);

  const ready = await answer();
  const identity = JSON.parse(ready.slice('ready '.length)) as Identity;
  return {
    identity,
    async time(batchSize) {
      const reply = answer();
      child.stdin!.write(`time ${batchSize}\n`);
      return Number((await reply).slice('seconds '.length));
    },
    async finish() {
      child.stdin!.end('done\n');
      await exited;
      const raw = JSON.parse(readFileSync(responseFile, 'utf8')) as {
        versions: Record<string, string>;
        identity: Identity;
        mean: number[][];
        quantiles: number[][][];
      };
      rmSync(dir, { recursive: true, force: true });
      return {
        python,
        versions: raw.versions,
        identity: raw.identity,
        mean: raw.mean.map((m) => Float64Array.from(m)),
        quantiles: raw.quantiles.map((perLevel) => perLevel.map((q) => Float64Array.from(q))),
      };
    },
  };
}
