/**
 * What a client may know of each model this server knows (GET /models): its family and kind,
 * whether it runs here, the covariate kinds it takes, whether its quantiles are its own, and the
 * context and horizon its installed export allows. Nothing in it names a server path
 * (docs/decisions/070-model-catalogue.md).
 */
import { expectedProvider } from '../families/foundation/execution-providers.ts';
import { availability, modelEntries, modelEntry, type ModelEntry } from './model-registry.ts';
import type { CovariateKind, ModelSettings } from './model-interface.ts';

export type ModelKind = 'statistical' | 'global' | 'foundation';

export interface ModelDescription {
  readonly name: string;
  readonly family: string;
  readonly kind: ModelKind;
  /** True when the model runs on this server now. */
  readonly installed: boolean;
  /** For a model with an adapter for exported weights: whether its export is there and verified; null for the others. */
  readonly export: 'verified' | 'not_installed' | 'failed_verification' | null;
  /** Why it does not run here, in a client's words; null when it does. */
  readonly unavailableReason: string | null;
  readonly covariates: readonly CovariateKind[];
  /** False when every quantile it answers equals its point forecast. */
  readonly quantiles: boolean;
  /** The longest history it reads (the installed export's context length); null when unbounded or not installed. */
  readonly maxContext: number | null;
  /** The horizons it forecasts; `most` null when unbounded. */
  readonly horizon: { readonly least: number; readonly most: number | null };
  /** For a model run by ONNX Runtime: the execution provider this server would create its session on; null for the others. */
  readonly executionProvider: string | null;
}

const kindOf = (e: ModelEntry): ModelKind => (e.capabilities.needsWeights ? 'foundation' : e.capabilities.global ? 'global' : 'statistical');

async function describe(e: ModelEntry, settings: ModelSettings): Promise<ModelDescription> {
  const found = availability(e, settings);
  const onnx = e.inspectExport !== undefined;
  const inspection = found.runnable ? e.inspectExport?.(settings) : undefined;
  const range = found.runnable ? e.horizonRange?.(settings) : null;
  return {
    name: e.name,
    family: e.family,
    kind: kindOf(e),
    installed: found.runnable,
    export: !onnx ? null : found.runnable ? 'verified' : found.export,
    unavailableReason: found.runnable ? null : found.reason,
    covariates: e.capabilities.covariates,
    quantiles: e.capabilities.pointOnly !== true,
    maxContext: inspection?.ok ? inspection.model.manifest.context_length : e.capabilities.maxContext,
    horizon: { least: range?.least ?? 1, most: range && Number.isFinite(range.most) ? range.most : null },
    executionProvider: onnx ? await expectedProvider(settings.executionProviders) : null,
  };
}

/** Every known model, in the registry's order. */
export function describeModels(settings: ModelSettings): Promise<ModelDescription[]> {
  return Promise.all(modelEntries().map((e) => describe(e, settings)));
}

/** One model, or null when the name is not known. */
export async function describeModel(name: string, settings: ModelSettings): Promise<ModelDescription | null> {
  const entry = modelEntry(name);
  return entry ? describe(entry, settings) : null;
}
