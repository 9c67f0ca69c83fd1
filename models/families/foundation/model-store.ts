/**
 * The model store: MODELS_DIR holds one folder per model name, each with the exported ONNX file
 * and a manifest.json that describes it (tools/export/README.md). This module finds a model's
 * folder, validates its manifest and checks the ONNX file against the manifest's checksum.
 *
 * The folder is MODELS_DIR (config.ts), handed to every caller: the API process checks a model
 * there before it accepts work, and worker threads load it from there. What is wrong is said
 * twice: to clients without any server path, and to operators with the folder and the fix
 * (docs/decisions/071-no-server-paths-for-clients.md).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ModelUnavailableError } from '../../contract/model-interface.ts';
import { tabiclManifestSchema } from './tabicl-manifest.ts';
import { tabpfnTsManifestSchema } from './tabpfn-ts-manifest.ts';
import { tirex2ManifestSchema } from './tirex2-manifest.ts';

export const MANIFEST_FILE = 'manifest.json';

const levels = z
  .array(z.number().gt(0).lt(1))
  .min(1)
  .refine((l) => l.every((v, i) => i === 0 || v > l[i - 1]), 'must increase strictly');

const common = {
  format: z.literal(1),
  version: z.string().min(1),
  source: z.string().optional(),
  onnx_file: z.string().regex(/^[^/\\]+\.onnx$/, 'a file name ending in .onnx, inside the model folder'),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a lower-case hexadecimal SHA-256'),
  bytes: z.number().int().positive(),
  context_length: z.number().int().positive(),
  patch_size: z.number().int().positive(),
  quantile_levels: levels,
  point_output: z.enum(['median', 'mean']),
  covariates: z.array(z.enum(['historical', 'future', 'static'])),
  exported_with: z.record(z.string(), z.string()).optional(),
};

export const Chronos2Manifest = z
  .object({
    ...common,
    model: z.literal('chronos-2'),
    output_patch_size: z.number().int().positive(),
    max_output_patches: z.number().int().positive(),
    options: z.object({ batch_size: z.number().int().positive(), rows_per_call: z.number().int().positive(), unrolled_quantiles: levels }).strict(),
  })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.quantile_levels.includes(0.5), { message: 'must include 0.5 (the point forecast)', path: ['quantile_levels'] })
  .refine((m) => m.context_length >= m.max_output_patches * m.output_patch_size, {
    message: 'must hold at least one native forecast (max_output_patches * output_patch_size) for the long-horizon roll-out',
    path: ['context_length'],
  })
  .refine((m) => m.options.unrolled_quantiles.every((q) => m.quantile_levels.includes(q)), {
    message: 'must be a subset of quantile_levels',
    path: ['options', 'unrolled_quantiles'],
  });

export const TimesFM25Manifest = z
  .object({
    ...common,
    model: z.literal('timesfm-2p5'),
    output_patch_len: z.number().int().positive(),
    output_quantile_len: z.number().int().positive(),
    context_limit: z.number().int().positive(),
    decode_index: z.number().int().nonnegative(),
    forecast_config: z
      .object({
        normalize_inputs: z.boolean(),
        use_continuous_quantile_head: z.boolean(),
        force_flip_invariance: z.boolean(),
        infer_is_positive: z.boolean(),
        fix_quantile_crossing: z.boolean(),
      })
      .strict(),
  })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.output_patch_len % m.patch_size === 0, { message: 'output_patch_len must be a multiple of patch_size', path: ['output_patch_len'] })
  .refine((m) => m.decode_index === m.quantile_levels.indexOf(0.5) + 1, {
    message: 'must point at the 0.5 channel (channel 0 is the mean head)',
    path: ['decode_index'],
  });

export const TimesFM2Manifest = z
  .object({
    ...common,
    model: z.literal('timesfm-2'),
    output_patch_len: z.number().int().positive(),
  })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.output_patch_len % m.patch_size === 0, { message: 'output_patch_len must be a multiple of patch_size', path: ['output_patch_len'] })
  .refine((m) => m.point_output === 'mean' || m.quantile_levels.includes(0.5), {
    message: 'must include 0.5 (the median point forecast)',
    path: ['quantile_levels'],
  });

/** PatchTST-FM (granite-tsfm): one pass reconstructs `min_forecast_length` slots at least. */
export const PatchTSTFMManifest = z
  .object({ ...common, model: z.literal('patchtst-fm'), min_forecast_length: z.number().int().positive() })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.min_forecast_length < m.context_length, { message: 'must be below context_length', path: ['min_forecast_length'] })
  .refine((m) => m.point_output === 'mean', { message: "must be 'mean' (the reference's prediction_outputs)", path: ['point_output'] });

/** Moirai 2.0 (uni2ts): `num_predict_token` patches per call; time ids below `max_time_tokens`. */
export const Moirai2Manifest = z
  .object({
    ...common,
    model: z.literal('moirai-2'),
    num_predict_token: z.number().int().positive(),
    max_time_tokens: z.number().int().positive(),
  })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.context_length / m.patch_size < m.max_time_tokens, { message: 'must exceed the context patches', path: ['max_time_tokens'] })
  .refine((m) => m.quantile_levels.includes(0.5), { message: 'must include 0.5 (the point forecast)', path: ['quantile_levels'] });

/** Toto 2.0 (toto-2): one pass holds the context and every horizon patch, at most `max_positions` patches. */
export const Toto2Manifest = z
  .object({
    ...common,
    model: z.literal('toto-2'),
    max_positions: z.number().int().min(2),
    forecast_config: z
      .object({ imputation: z.literal('ffill'), scaler_fallback_min_obs: z.number().int().nonnegative(), quantile_real_cap_k: z.number().positive() })
      .strict(),
  })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.quantile_levels.includes(0.5), { message: 'must include 0.5 (the point forecast)', path: ['quantile_levels'] });

/** Moirai-MoE (uni2ts): the released mixture head; `num_samples` paths past the first patch. */
export const MoiraiMoEManifest = z
  .object({
    ...common,
    model: z.literal('moirai-moe'),
    max_time_tokens: z.number().int().positive(),
    mixture: z
      .object({
        components: z.tuple([z.literal('student_t'), z.literal('normal_fixed_scale'), z.literal('negative_binomial'), z.literal('log_normal')]),
        normal_scale: z.number().positive(),
        channels: z.array(z.string()).length(14),
      })
      .strict(),
    num_samples: z.number().int().positive(),
  })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.context_length / m.patch_size < m.max_time_tokens, { message: 'must exceed the context patches', path: ['max_time_tokens'] });

/** Reverso (the paper's reference code): point forecasts of `output_patch_size` steps per call, rolled out. */
export const ReversoManifest = z
  .object({
    ...common,
    model: z.literal('reverso'),
    output_patch_size: z.number().int().positive(),
    forecast_config: z.object({ flip_invariance: z.boolean(), downsample_factor: z.number().int().positive() }).strict(),
  })
  .strict()
  .refine((m) => m.patch_size === 1, { message: 'must be 1 (Reverso reads the series point by point)', path: ['patch_size'] })
  .refine((m) => m.quantile_levels.length === 1 && m.quantile_levels[0] === 0.5, {
    message: 'must be [0.5]: the reference forecasts a point',
    path: ['quantile_levels'],
  });

/** TiRex (tirex-ts): one call forecasts the patch after a window of exactly `context_length` values. */
export const TiRexManifest = z
  .object({ ...common, model: z.literal('tirex') })
  .strict()
  .refine((m) => m.context_length % m.patch_size === 0, { message: 'context_length must be a multiple of patch_size', path: ['context_length'] })
  .refine((m) => m.quantile_levels.includes(0.5), { message: 'must include 0.5 (the point forecast)', path: ['quantile_levels'] })
  .refine((m) => m.point_output === 'median', { message: "must be 'median' (the reference's point forecast is its 0.5 level)", path: ['point_output'] });

/** TabICL (tabicl.forecast): one table per series, the regressor's configuration in tabicl-manifest.ts. */
export const TabICLManifest = tabiclManifestSchema(common);

/** TabPFN-TS (tabpfn-time-series): one table per series, the regressor's configuration in tabpfn-ts-manifest.ts. */
export const TabPFNTSManifest = tabpfnTsManifestSchema(common);

/** TiRex-2 (tirex-2): one call forecasts the `future_length` steps after the context, the configuration in tirex2-manifest.ts. */
export const Tirex2Manifest = tirex2ManifestSchema(common);

export type Chronos2Manifest = z.output<typeof Chronos2Manifest>;
export type TimesFM25Manifest = z.output<typeof TimesFM25Manifest>;
export type TimesFM2Manifest = z.output<typeof TimesFM2Manifest>;
export type Toto2Manifest = z.output<typeof Toto2Manifest>;
export type Moirai2Manifest = z.output<typeof Moirai2Manifest>;
export type MoiraiMoEManifest = z.output<typeof MoiraiMoEManifest>;
export type PatchTSTFMManifest = z.output<typeof PatchTSTFMManifest>;
export type ReversoManifest = z.output<typeof ReversoManifest>;
export type TiRexManifest = z.output<typeof TiRexManifest>;
export type Tirex2Manifest = z.output<typeof Tirex2Manifest>;
export type TabICLManifest = z.output<typeof TabICLManifest>;
export type TabPFNTSManifest = z.output<typeof TabPFNTSManifest>;

/** Manifest schema of every model name that has an adapter on this server. */
export const MANIFESTS = {
  'chronos-2': Chronos2Manifest,
  'timesfm-2p5': TimesFM25Manifest,
  'timesfm-2': TimesFM2Manifest,
  'toto-2': Toto2Manifest,
  'moirai-2': Moirai2Manifest,
  'moirai-moe': MoiraiMoEManifest,
  'patchtst-fm': PatchTSTFMManifest,
  reverso: ReversoManifest,
  tirex: TiRexManifest,
  'tirex-2': Tirex2Manifest,
  tabicl: TabICLManifest,
  'tabpfn-ts': TabPFNTSManifest,
} as const;
export type FoundationName = keyof typeof MANIFESTS;
export type ManifestOf<N extends FoundationName> = z.output<(typeof MANIFESTS)[N]>;

export interface InstalledModel<N extends FoundationName = FoundationName> {
  readonly name: N;
  readonly folder: string;
  readonly onnxPath: string;
  readonly manifest: ManifestOf<N>;
  /** Identity of the verified file: a session is reused while this does not change. */
  readonly fingerprint: string;
}

/**
 * Why an export cannot be used: `state` (nothing installed, or files that fail verification), a
 * `reason` for clients that names no server path, and a `hint` for operators (the folder, the file
 * at fault, the export command), which goes to the server's log and to operator tools.
 */
export interface ExportProblem {
  readonly ok: false;
  readonly state: 'not_installed' | 'failed_verification';
  readonly reason: string;
  readonly hint: string;
}

export type Inspection<N extends FoundationName = FoundationName> = { ok: true; model: InstalledModel<N> } | ExportProblem;

const NOT_INSTALLED = 'its exported model is not installed on this server';
const FAILED_VERIFICATION = "its installed export failed verification on this server (the server's log says why)";
const notInstalled = (hint: string): ExportProblem => ({ ok: false, state: 'not_installed', reason: NOT_INSTALLED, hint });
const failedVerification = (hint: string): ExportProblem => ({ ok: false, state: 'failed_verification', reason: FAILED_VERIFICATION, hint });

const exportHint = (name: string, dir: string) =>
  `install it with \`npm run models -- install ${name}\` (its reference checkpoint from the Hugging Face Hub, or --checkpoint <local checkpoint>), or export it with \`python tools/export/export.py ${name} --checkpoint <local checkpoint> --out ${dir}\` (tools/export/README.md)`;

/** SHA-256 of verified files, keyed by path, size and modification time. */
const verified = new Map<string, string>();

function sha256File(file: string): string {
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const read = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (read === 0) break;
      hash.update(buffer.subarray(0, read));
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

/**
 * Checks that a model is installed and intact: its folder and manifest exist, the manifest is
 * valid for the model's adapter, and the ONNX file has the manifest's size and checksum. The
 * checksum is computed once per file version (size and modification time), so a check is a few
 * `stat` calls after the first; the first reads the whole file (about a second per GB), which
 * GET /warmup does ahead of traffic.
 */
export function inspectModel<N extends FoundationName>(name: N, dir: string): Inspection<N> {
  const folder = path.join(dir, name);
  const manifestPath = path.join(folder, MANIFEST_FILE);
  if (!fs.existsSync(manifestPath)) {
    const what = fs.existsSync(folder) ? `its folder ${folder} has no ${MANIFEST_FILE}` : `no folder ${folder}`;
    return notInstalled(
      `its exported model is not installed: ${what}. Place the exported ${name} folder (${MANIFEST_FILE} and the ONNX file it names) at ${folder} (MODELS_DIR=${dir}); ${exportHint(name, dir)}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  } catch (err) {
    return failedVerification(
      `its manifest ${manifestPath} is not valid JSON (${err instanceof Error ? err.message : String(err)}); re-export the model (${exportHint(name, dir)})`,
    );
  }
  const parsed = MANIFESTS[name].safeParse(raw);
  if (!parsed.success) {
    return failedVerification(`its manifest ${manifestPath} is invalid: ${describeIssues(parsed.error)}; re-export the model (${exportHint(name, dir)})`);
  }
  const manifest = parsed.data as ManifestOf<N>;
  if (manifest.model !== name) {
    return failedVerification(`the manifest ${manifestPath} describes '${manifest.model}', not '${name}'; put each model in the folder of its own name`);
  }
  const onnxPath = path.join(folder, manifest.onnx_file);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(onnxPath);
  } catch {
    return failedVerification(`its ONNX file is missing: ${manifestPath} names ${manifest.onnx_file}, expected at ${onnxPath}; copy the whole exported folder`);
  }
  if (stat.size !== manifest.bytes) {
    return failedVerification(
      `its ONNX file ${onnxPath} has ${stat.size} bytes but the manifest says ${manifest.bytes}: the file is incomplete or not the exported one; copy the exported folder again`,
    );
  }
  const key = `${onnxPath}\0${stat.size}\0${stat.mtimeMs}`;
  let digest = verified.get(key);
  if (digest === undefined) {
    digest = sha256File(onnxPath);
    verified.set(key, digest);
  }
  if (digest !== manifest.sha256) {
    return failedVerification(
      `its ONNX file ${onnxPath} is corrupt: SHA-256 ${digest} but the manifest says ${manifest.sha256}; copy the exported folder again`,
    );
  }
  return { ok: true, model: { name, folder, onnxPath, manifest, fingerprint: `${key}\0${digest}` } };
}

/** Raised when a model is used that is not installed or not intact: the client's words, and the operator's in `operatorDetail`. */
export class ModelNotInstalledError extends ModelUnavailableError {
  override readonly name = 'ModelNotInstalledError';
}

export function requireInstalled<N extends FoundationName>(name: N, dir: string): InstalledModel<N> {
  const found = inspectModel(name, dir);
  if (!found.ok) throw new ModelNotInstalledError(found.reason, `model '${name}': ${found.hint}`);
  return found.model;
}
