/**
 * The horizons an installed export can forecast, where its graph bounds them rather than a
 * roll-out (docs/foundation-models.md). Read from the manifest, so the request is checked before
 * anything runs: the 422 names the request's horizon field (a job is refused at submission), and
 * the adapter's own check, with the same words, guards direct calls.
 */
import { ModelInputError } from '../../contract/model-interface.ts';
import { inspectModel, type FoundationName, type ManifestOf } from './model-store.ts';

export interface HorizonRange {
  readonly least: number;
  readonly most: number;
  /** Why, in the model's terms (a clause that follows "steps: "). */
  readonly why: string;
}

const RANGES: { readonly [N in FoundationName]?: (m: ManifestOf<N>) => HorizonRange } = {
  'patchtst-fm': (m) => ({
    least: 1,
    most: m.context_length - 1,
    why: `horizon below its context length ${m.context_length}, which holds the history and the forecast in one pass; the reference has no roll-out`,
  }),
  // The reference's window shortens by a patch for each horizon patch past the first
  // (Toto2GluonTSModel.instance_splitter), so a pass holds context_length / patch_size + 1
  // patches until the window is one patch long, and one per horizon patch from there.
  'toto-2': (m) => ({
    least: 1,
    most: m.context_length / m.patch_size + 1 <= m.max_positions ? (m.max_positions - 1) * m.patch_size : 0,
    why: `one pass holds the context and every horizon patch, at most ${m.max_positions} patches of ${m.patch_size}`,
  }),
  // Time ids beyond max_time_tokens have no rotary position: the roll-out stops there.
  'moirai-2': (m) => timeTokenRange(m.context_length, m.patch_size, m.max_time_tokens),
  'moirai-moe': (m) => timeTokenRange(m.context_length, m.patch_size, m.max_time_tokens),
  // The reference has no roll-out: `TiRex2._prepare_input` cuts a longer horizon to future_len.
  'tirex-2': (m) => ({
    least: 1,
    most: m.future_length,
    why: `its native horizon of ${m.future_length} steps; the reference has no roll-out and cuts a longer horizon to it`,
  }),
  reverso: (m) => {
    const k = m.forecast_config.downsample_factor;
    return {
      least: Math.max(1, k),
      most: Infinity,
      why: `its downsample factor ${k}: the reference forecasts horizon // ${k} steps and interpolates them`,
    };
  },
};

function timeTokenRange(context: number, patch: number, maxTimeTokens: number): HorizonRange {
  const pastTokens = context / patch;
  return {
    least: 1,
    most: (maxTimeTokens - pastTokens) * patch,
    why: `its time ids stop at ${maxTimeTokens} patches of ${patch}, ${pastTokens} of them its context of ${context}`,
  };
}

/** The range of a model's manifest, or null when its graph does not bound the horizon. */
export function horizonRangeOf<N extends FoundationName>(name: N, manifest: ManifestOf<N>): HorizonRange | null {
  const range = RANGES[name] as ((m: ManifestOf<N>) => HorizonRange) | undefined;
  return range ? range(manifest) : null;
}

/** The range of the installed export (null when none bounds it, or when it is not installed: that is answered elsewhere). */
export function installedHorizonRange(name: FoundationName, modelsDir: string): HorizonRange | null {
  if (!RANGES[name]) return null;
  const found = inspectModel(name, modelsDir);
  return found.ok ? horizonRangeOf(name, found.model.manifest) : null;
}

/** What is wrong with a horizon for a model, or null when it is in range. */
export function horizonOutOfRange(model: string, range: HorizonRange, horizon: number): string | null {
  if (Number.isInteger(horizon) && horizon >= range.least && horizon <= range.most) return null;
  const bounds = [range.least > 1 ? `at least ${range.least}` : '', Number.isFinite(range.most) ? `at most ${range.most}` : ''].filter(Boolean).join(' and ');
  return `horizon ${horizon} is out of range for ${model}: it forecasts ${bounds} steps (${range.why})`;
}

/** The adapter's guard: the same words as the request check. */
export function requireHorizonInRange<N extends FoundationName>(name: N, manifest: ManifestOf<N>, horizon: number): void {
  const range = horizonRangeOf(name, manifest);
  const problem = range && horizonOutOfRange(name, range, horizon);
  if (problem) throw new ModelInputError(problem);
}
