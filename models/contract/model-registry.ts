import { installedHorizonRange, type HorizonRange } from '../families/foundation/horizon-range.ts';
import { inspectModel, type FoundationName, type Inspection } from '../families/foundation/model-store.ts';
import { aarimaConfig } from '../families/arima/aarima-config.ts';
import { cesConfig } from '../families/ces/ces-config.ts';
import { ENSEMBLE_MEMBERS, ensembleConfig } from '../families/ensemble/ensemble-config.ts';
import { aetsConfig } from '../families/ets/aets-config.ts';
import { chronos2Config } from '../families/foundation/chronos2-config.ts';
import { mstlConfig } from '../families/mstl/mstl-config.ts';
import { NAIVE_SEASON_LENGTH, naiveConfig, seasonalNaiveConfig, seasonalWindowAverageConfig } from '../families/naive/naive-config.ts';
import { thetaConfig } from '../families/theta/theta-config.ts';
import type { ModelConfigSpec } from './model-config.ts';
import type { CovariateKind, GlobalModel, LocalModel, ModelCapabilities, ModelSettings } from './model-interface.ts';

export { ENSEMBLE_MEMBERS };

/**
 * Every model name the API reference knows (section 1, the model_config table of 2.4 and the
 * earlier variant's list of 9.3), with its capabilities. A name listed here but without an
 * implementation on this server is a known model that answers "not available", never an
 * unknown one, and never another model's output.
 */

export interface ModelEntry {
  readonly name: string;
  /** The line of models it belongs to (`ets` for aets, `timesfm` for both TimesFM versions), as clients group them. */
  readonly family: string;
  readonly capabilities: ModelCapabilities;
  /** Loads a model fitted on each series alone. */
  readonly loadLocal?: () => Promise<LocalModel>;
  /** Loads a model that sees the whole request at once (global and foundation models). */
  readonly loadGlobal?: (settings: ModelSettings) => Promise<GlobalModel>;
  /** Why the model cannot run here, for models with neither loader. */
  readonly unavailableReason?: string;
  /**
   * For models that run exported weights: their installed export, verified, or what is missing or
   * wrong, for clients and for operators (models/families/foundation/model-store.ts).
   */
  readonly inspectExport?: (settings: ModelSettings) => Inspection;
  /** The horizons the installed model can forecast, where its graph bounds them (models/families/foundation/horizon-range.ts). */
  readonly horizonRange?: (settings: ModelSettings) => HorizonRange | null;
  /** Its `model_config.config`: the schema, and how a config becomes its options. Absent: it takes no model_config. */
  readonly config?: ModelConfigSpec;
  /** The seasonal period it gets when model_config names none; absent: the frequency's natural cycle. */
  readonly defaultSeasonLength?: number;
}

const NONE: readonly CovariateKind[] = [];
const FULL_EXOGENOUS: readonly CovariateKind[] = ['historical', 'future', 'static'];

const local = (covariates: readonly CovariateKind[] = NONE): ModelCapabilities => ({ covariates, maxContext: null, needsWeights: false, global: false });
/** Foundation models: their context length comes from the installed model's manifest. */
const foundation = (covariates: readonly CovariateKind[], couplesSeries: ModelCapabilities['couplesSeries'] = 'always'): ModelCapabilities => ({
  covariates,
  maxContext: null,
  needsWeights: true,
  global: true,
  couplesSeries,
});

const NO_ADAPTER =
  'this server has no adapter for this foundation model yet, so installing its weights would not help (docs/foundation-models.md gives the input/output contract an adapter expects)';

/** A foundation model with an adapter (models/families/foundation/): runnable once its export is installed. */
const installedFoundation =
  (name: FoundationName) =>
  (settings: ModelSettings): Inspection =>
    inspectModel(name, settings.modelsDir);

const ENTRIES: ModelEntry[] = [
  {
    name: 'naive',
    family: 'naive',
    capabilities: { ...local(), fitFree: true },
    loadLocal: async () => (await import('../families/naive/naive.ts')).naive,
    config: naiveConfig,
    defaultSeasonLength: NAIVE_SEASON_LENGTH,
  },
  {
    name: 'seasonal-naive',
    family: 'naive',
    capabilities: { ...local(), fitFree: true },
    loadLocal: async () => (await import('../families/naive/naive.ts')).seasonalNaiveModel,
    config: seasonalNaiveConfig,
  },
  {
    name: 'aets',
    family: 'ets',
    capabilities: { ...local(), reusesFit: true },
    loadLocal: async () => (await import('../families/ets/aets.ts')).aets,
    config: aetsConfig,
  },
  // Numeric future covariates, caller-supplied or generated, as regressors (regression with ARIMA
  // errors): beyond the reference, which marks aarima's covariates as coming.
  {
    name: 'aarima',
    family: 'arima',
    capabilities: { ...local(['future', 'generated']), reusesFit: true },
    loadLocal: async () => (await import('../families/arima/aarima.ts')).aarima,
    config: aarimaConfig,
  },
  // Beyond the API reference's list (issue 12): automatic Theta, statsforecast's AutoTheta.
  {
    name: 'theta',
    family: 'theta',
    capabilities: { ...local(), reusesFit: true },
    loadLocal: async () => (await import('../families/theta/theta.ts')).theta,
    config: thetaConfig,
  },
  // Beyond the API reference's list (issue 12): complex exponential smoothing, statsforecast's AutoCES.
  {
    name: 'ces',
    family: 'ces',
    capabilities: { ...local(), reusesFit: true },
    loadLocal: async () => (await import('../families/ces/ces.ts')).ces,
    config: cesConfig,
  },
  // Beyond the API reference's list (issue 12): several seasonalities, statsforecast's MSTL.
  {
    name: 'mstl',
    family: 'mstl',
    capabilities: { ...local(), multipleSeasons: true, reusesFit: true },
    loadLocal: async () => (await import('../families/mstl/mstl.ts')).mstl,
    config: mstlConfig,
  },
  // Beyond the API reference's list: statsforecast's SeasonalWindowAverage, over the longest
  // season (the week on hourly data); the multi-seasonal ensemble's cheapest member.
  {
    name: 'seasonal-window-average',
    family: 'naive',
    capabilities: { ...local(), fitFree: true, multipleSeasons: true },
    loadLocal: async () => (await import('../families/naive/seasonal-window-average.ts')).seasonalWindowAverageModel,
    config: seasonalWindowAverageConfig,
  },
  {
    // Beyond the API reference's list (issue 12): a validated combination of the statistical
    // models and svc-global. Numeric covariates reach the members that take them (svc-global all
    // kinds, aarima future ones); strings are refused, as aarima cannot take them.
    name: 'ensemble',
    family: 'ensemble',
    capabilities: {
      covariates: ['historical', 'future', 'static', 'generated'],
      maxContext: null,
      needsWeights: false,
      global: true,
      multipleSeasons: true,
      combinesMembers: true,
    },
    loadGlobal: async (settings) => (await import('../families/ensemble/ensemble.ts')).createEnsemble((name) => loadMember(name, settings)),
    config: ensembleConfig,
  },
  {
    // Every covariate kind: the reference's "all kinds" row, and generated covariates (issue 5).
    name: 'svc-global',
    family: 'svc-global',
    capabilities: { covariates: [...FULL_EXOGENOUS, 'string', 'generated'], maxContext: null, needsWeights: false, global: true },
    loadGlobal: async () => (await import('../families/svc-global/svc-global.ts')).svcGlobal,
  },
  {
    // Past-only and known-future covariates are Chronos-2's own inputs (generated ones arrive as
    // such); it has no static input, and a constant row carries no value through its scaling.
    name: 'chronos-2',
    family: 'chronos',
    capabilities: foundation(['historical', 'future', 'generated'], 'cross-learning'),
    loadGlobal: async (settings) => (await import('../families/foundation/chronos2.ts')).chronos2Model(settings),
    inspectExport: installedFoundation('chronos-2'),
    config: chronos2Config,
  },
  {
    // Known-future covariates (the reference's table: future only), caller-supplied or generated,
    // through the model's in-context regression (models/families/foundation/timesfm-xreg.ts). Numeric only:
    // the API reference gives string covariates to tabpfn-ts and svc-global alone, although the
    // regression, like TimesFM's own, could one-hot encode them.
    name: 'timesfm-2p5',
    family: 'timesfm',
    capabilities: foundation(['future', 'generated'], 'covariates'),
    loadGlobal: async (settings) => (await import('../families/foundation/timesfm2p5.ts')).timesfm25Model(settings),
    inspectExport: installedFoundation('timesfm-2p5'),
  },
  {
    // Past-only and known-future covariates are extra variates of the reference's own input
    // (Moirai2Forecast's past_feat_dynamic_real and feat_dynamic_real); generated ones arrive as
    // such. It has no static input. Each series attends only to its own tokens.
    name: 'moirai-2',
    family: 'moirai',
    capabilities: foundation(['historical', 'future', 'generated'], 'covariates'),
    loadGlobal: async (settings) => (await import('../families/foundation/moirai2.ts')).moirai2Model(settings),
    inspectExport: installedFoundation('moirai-2'),
    horizonRange: (settings) => installedHorizonRange('moirai-2', settings.modelsDir),
  },
  {
    // As moirai-2: past-only and known-future covariates are extra variates of the reference's
    // input (MoiraiMoEForecast's past_feat_dynamic_real and feat_dynamic_real); no static input.
    name: 'moirai-moe',
    family: 'moirai',
    capabilities: foundation(['historical', 'future', 'generated'], 'covariates'),
    loadGlobal: async (settings) => (await import('../families/foundation/moirai-moe.ts')).moiraiMoEModel(settings),
    inspectExport: installedFoundation('moirai-moe'),
    horizonRange: (settings) => installedHorizonRange('moirai-moe', settings.modelsDir),
  },
  {
    // Every covariate kind, text included (the API reference gives string covariates to tabpfn-ts
    // and svc-global), as the reference's TabPFNTSPipeline takes its context frame's columns:
    // known-future ones (generated ones arrive as such), past-only ones (NaN over the horizon) and
    // static ones (constant, so the regressor drops them); text columns of at most 30 values are
    // categories. Each series is a table of its own and the model has no is_global, so the series
    // of a request are never coupled.
    name: 'tabpfn-ts',
    family: 'tabpfn',
    capabilities: foundation([...FULL_EXOGENOUS, 'string', 'generated'], 'cross-learning'),
    loadGlobal: async (settings) => (await import('../families/foundation/tabpfn-ts.ts')).tabpfnTsModel(settings),
    inspectExport: installedFoundation('tabpfn-ts'),
  },
  {
    // Known-future numeric covariates through the reference's in-context regression, as
    // timesfm-2p5 (the reference's table: future covariates only).
    name: 'timesfm-2',
    family: 'timesfm',
    capabilities: foundation(['future', 'generated'], 'covariates'),
    loadGlobal: async (settings) => (await import('../families/foundation/timesfm2.ts')).timesfm2Model(settings),
    inspectExport: installedFoundation('timesfm-2'),
  },
  {
    // Univariate, as the reference's covariate table ("none") and TiRex itself (tirex-ts 1.4.2:
    // its forecast reads each series alone). Each series and roll-out step is a window of its
    // own, so the series of a request are never coupled.
    name: 'tirex',
    family: 'tirex',
    capabilities: foundation(NONE, 'covariates'),
    loadGlobal: async (settings) => (await import('../families/foundation/tirex.ts')).tirexModel(settings),
    inspectExport: installedFoundation('tirex'),
  },
  {
    // Known-future numeric covariates (caller-supplied or generated) as feature columns, as the
    // reference's TabICLForecaster takes them (columns present in both the context and the future
    // frame); the API reference's covariate table is silent on tabicl. Past-only and static ones
    // are refused: the pipeline has no use for them (a past-only column is imputed with its mean
    // over the horizon; a static one is constant within a series' table, and dropped). Each series
    // is a table of its own and the model has no is_global, so the series are never coupled.
    name: 'tabicl',
    family: 'tabicl',
    capabilities: foundation(['future', 'generated'], 'cross-learning'),
    loadGlobal: async (settings) => (await import('../families/foundation/tabicl.ts')).tabiclModel(settings),
    inspectExport: installedFoundation('tabicl'),
  },
  {
    // Past-only and known-future numeric covariates (generated ones arrive as such) are extra
    // variates of the series' own group, as the reference's TimeseriesType takes them
    // (past_covariates, future_covariates; tirex-2 0.4.0); the API reference's covariate table is
    // silent on tirex-2. It has no static input. The attention mixes the rows of one series only
    // and the model has no is_global, so the series of a request are never coupled.
    name: 'tirex-2',
    family: 'tirex',
    capabilities: foundation(['historical', 'future', 'generated'], 'cross-learning'),
    loadGlobal: async (settings) => (await import('../families/foundation/tirex2.ts')).tirex2Model(settings),
    inspectExport: installedFoundation('tirex-2'),
    horizonRange: (settings) => installedHorizonRange('tirex-2', settings.modelsDir),
  },
  // The reference's covariate table is silent on these: they are taken as univariate.
  ...['t0-alpha', 't0-beta'].map((name) => ({
    name,
    family: 't0',
    capabilities: foundation(NONE),
    unavailableReason: NO_ADAPTER,
  })),
  {
    // Univariate, as the reference's covariate table (silent on it) and toto-2 2.0.0's README
    // (exogenous variables "planned for a future 2.0 release"). Each series is one row of its own
    // (one variate), so the series of a request are never coupled.
    name: 'toto-2',
    family: 'toto',
    capabilities: foundation(NONE, 'covariates'),
    loadGlobal: async (settings) => (await import('../families/foundation/toto.ts')).toto2Model(settings),
    inspectExport: installedFoundation('toto-2'),
    horizonRange: (settings) => installedHorizonRange('toto-2', settings.modelsDir),
  },
  {
    // Univariate, as the reference's covariate table (silent on it) and the reference itself: its
    // forecast reads the series alone. Each series is forecast from its own window, so the series
    // of a request are never coupled (it takes no covariates that could couple them).
    name: 'patchtst-fm',
    family: 'patchtst',
    capabilities: foundation(NONE, 'covariates'),
    loadGlobal: async (settings) => (await import('../families/foundation/patchtst-fm.ts')).patchtstFMModel(settings),
    inspectExport: installedFoundation('patchtst-fm'),
    horizonRange: (settings) => installedHorizonRange('patchtst-fm', settings.modelsDir),
  },
  {
    // Univariate, as the reference's covariate table (silent on it) and the reference itself:
    // ReversoPredictor reads each series' target alone. Each series is its own row, so the series
    // of a request are never coupled.
    name: 'reverso',
    family: 'reverso',
    // Its quantiles are its point forecast, as the reference's samples are.
    capabilities: { ...foundation(NONE, 'covariates'), pointOnly: true },
    loadGlobal: async (settings) => (await import('../families/foundation/reverso.ts')).reversoModel(settings),
    inspectExport: installedFoundation('reverso'),
    horizonRange: (settings) => installedHorizonRange('reverso', settings.modelsDir),
  },
  // The earlier variant's model list (reference 9.3); none of these is served any more.
  ...['moirai', 'chronos', 'chronos-bolt', 'timesfm', 'time-moe'].map((name) => ({
    name,
    family: name === 'chronos-bolt' ? 'chronos' : name,
    capabilities: foundation(name === 'moirai' ? [...FULL_EXOGENOUS, 'generated'] : NONE),
    unavailableReason: 'it belongs to the earlier model list and is not served by this version',
  })),
];

export async function loadMember(name: string, settings: ModelSettings): Promise<LocalModel | GlobalModel> {
  const entry = (ENSEMBLE_MEMBERS as readonly string[]).includes(name) ? BY_NAME.get(name) : undefined;
  if (name === 'naive') {
    // The ensemble's season length is for its seasonal members; naive stays the last value.
    const { naive } = await import('../families/naive/naive.ts');
    return { name, forecast: (task) => naive.forecast({ ...task, seasonLength: NAIVE_SEASON_LENGTH }) };
  }
  if (entry?.loadLocal) return entry.loadLocal();
  if (entry?.loadGlobal) return entry.loadGlobal(settings);
  throw new Error(`${name} cannot be an ensemble member (members: ${ENSEMBLE_MEMBERS.join(', ')})`);
}

export const MODEL_NAMES = ENTRIES.map((e) => e.name) as [string, ...string[]];

const BY_NAME = new Map(ENTRIES.map((e) => [e.name, e]));

export function modelEntry(name: string): ModelEntry | undefined {
  return BY_NAME.get(name);
}

/**
 * Whether a model runs on this server now. When not: `reason` for clients, naming no server path;
 * `hint` for operators (the folder, the file at fault, the export command), null when installing
 * would not help (docs/decisions/071-no-server-paths-for-clients.md).
 */
export type Availability =
  | { readonly runnable: true }
  | { readonly runnable: false; readonly reason: string; readonly hint: string | null; readonly export: 'not_installed' | 'failed_verification' | null };

export function availability(e: ModelEntry, settings: ModelSettings): Availability {
  if (!(e.loadLocal ?? e.loadGlobal))
    return { runnable: false, reason: e.unavailableReason ?? 'it is not implemented on this server', hint: null, export: null };
  const found = e.inspectExport?.(settings);
  if (!found || found.ok) return { runnable: true };
  return { runnable: false, reason: found.reason, hint: `model '${e.name}': ${found.hint}`, export: found.state };
}

/**
 * What an operator must do before a known model runs here (where its export goes, and how to make
 * it), or null when it runs or installing would not help: for the server's log and operator tools.
 */
export function operatorHint(name: string, settings: ModelSettings): string | null {
  const entry = modelEntry(name);
  const found = entry && availability(entry, settings);
  return found && !found.runnable ? found.hint : null;
}

/** Names of the models this server can run now. */
export function availableModels(settings: ModelSettings): string[] {
  return ENTRIES.filter((e) => availability(e, settings).runnable).map((e) => e.name);
}

/** Every known model's entry, in the registry's order. */
export function modelEntries(): readonly ModelEntry[] {
  return ENTRIES;
}

/**
 * The variants of the request's model_config, one per model that takes one. Listed in the order
 * the document has always listed them, so that /openapi stays the same as models are added.
 */
const CONFIG_ORDER = ['aarima', 'aets', 'ces', 'ensemble', 'chronos-2', 'mstl', 'naive', 'seasonal-naive', 'theta'];

export function modelConfigVariants(): { name: string; config: ModelConfigSpec }[] {
  const withConfig = ENTRIES.filter((e): e is ModelEntry & { config: ModelConfigSpec } => e.config !== undefined);
  const rank = (name: string) => (CONFIG_ORDER.includes(name) ? CONFIG_ORDER.indexOf(name) : CONFIG_ORDER.length);
  return withConfig.sort((a, b) => rank(a.name) - rank(b.name)).map((e) => ({ name: e.name, config: e.config }));
}
