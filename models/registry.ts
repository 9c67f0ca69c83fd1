import type { CovariateKind, GlobalModel, LocalModel, ModelCapabilities } from './types.ts';

/**
 * Every model name the API reference knows (section 1, the model_config table of 2.4 and the
 * earlier variant's list of 9.3), with its capabilities. A name listed here but without an
 * implementation on this server is a known model that answers "not available", never an
 * unknown one, and never another model's output.
 */

export interface ModelEntry {
  readonly name: string;
  readonly capabilities: ModelCapabilities;
  /** Loads a model fitted on each series alone. */
  readonly loadLocal?: () => Promise<LocalModel>;
  /** Loads a model that sees the whole request at once (global and foundation models). */
  readonly loadGlobal?: () => Promise<GlobalModel>;
  /** Why the model cannot run here, for models with neither loader. */
  readonly unavailableReason?: string;
}

const NONE: readonly CovariateKind[] = [];
const FULL_EXOGENOUS: readonly CovariateKind[] = ['historical', 'future', 'static'];

const local = (covariates: readonly CovariateKind[] = NONE): ModelCapabilities => ({ covariates, maxContext: null, needsWeights: false, global: false });
/** Foundation models: their context length comes from the installed model's manifest. */
const foundation = (covariates: readonly CovariateKind[]): ModelCapabilities => ({ covariates, maxContext: null, needsWeights: true, global: true });

const NEEDS_WEIGHTS = 'it is a foundation model and this server has no exported weights installed for it';

const ENTRIES: ModelEntry[] = [
  { name: 'naive', capabilities: local(), loadLocal: async () => (await import('./naive.ts')).naive },
  { name: 'seasonal-naive', capabilities: local(), loadLocal: async () => (await import('./naive.ts')).seasonalNaiveModel },
  { name: 'aets', capabilities: local(), loadLocal: async () => (await import('./aets.ts')).aets },
  { name: 'aarima', capabilities: local(), loadLocal: async () => (await import('./aarima.ts')).aarima },
  {
    // Every covariate kind: the reference's "all kinds" row, and generated covariates (issue 5).
    name: 'svc-global',
    capabilities: { covariates: [...FULL_EXOGENOUS, 'string', 'generated'], maxContext: null, needsWeights: false, global: true },
    loadGlobal: async () => (await import('./svc-global/index.ts')).svcGlobal,
  },
  ...['chronos-2', 'moirai-2', 'moirai-moe'].map((name) => ({ name, capabilities: foundation([...FULL_EXOGENOUS, 'generated']), unavailableReason: NEEDS_WEIGHTS })),
  { name: 'tabpfn-ts', capabilities: foundation([...FULL_EXOGENOUS, 'string', 'generated']), unavailableReason: NEEDS_WEIGHTS },
  ...['timesfm-2', 'timesfm-2p5'].map((name) => ({ name, capabilities: foundation(['future']), unavailableReason: NEEDS_WEIGHTS })),
  // The reference's covariate table is silent on these: they are taken as univariate.
  ...['tirex', 'tirex-2', 'toto-2', 't0-alpha', 't0-beta', 'tabicl', 'reverso', 'patchtst-fm'].map((name) => ({ name, capabilities: foundation(NONE), unavailableReason: NEEDS_WEIGHTS })),
  // The earlier variant's model list (reference 9.3); none of these is served any more.
  ...['moirai', 'chronos', 'chronos-bolt', 'timesfm', 'time-moe'].map((name) => ({
    name,
    capabilities: foundation(name === 'moirai' ? [...FULL_EXOGENOUS, 'generated'] : NONE),
    unavailableReason: 'it belongs to the earlier model list and is not served by this version',
  })),
];

export const MODEL_NAMES = ENTRIES.map((e) => e.name) as [string, ...string[]];

const BY_NAME = new Map(ENTRIES.map((e) => [e.name, e]));

export function modelEntry(name: string): ModelEntry | undefined {
  return BY_NAME.get(name);
}

export const isRunnable = (e: ModelEntry): boolean => Boolean(e.loadLocal ?? e.loadGlobal);

/** Names of the models this server can run now. */
export function availableModels(): string[] {
  return ENTRIES.filter(isRunnable).map((e) => e.name);
}
