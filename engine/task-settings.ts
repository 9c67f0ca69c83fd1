import type { ModelEntry } from '../models/contract/model-registry.ts';
import type { ConformalSettings, GlobalBatchOptions } from '../models/contract/model-interface.ts';
import type { ModelConfig } from './request-schema.ts';
import { seasonLength } from './tasks.ts';

/**
 * What a request's model_config means for its tasks, the same for both front doors (the stable
 * request and the beta query). The model's own options come from its registry entry; the settings
 * several models share are read by their names (models/contract/model-config.ts): `season_length`,
 * `intervals` with `conformal_windows`, and `is_global`.
 */
export interface TaskSettings {
  /** The seasonal period every task gets. */
  readonly season: number;
  /** Every seasonal period, for a model that takes several. */
  readonly seasonLengths?: readonly number[];
  /** A local model's own options, carried on each task. */
  readonly options?: unknown;
  /** Conformal quantiles instead of the model's own, when the caller asked for them. */
  readonly conformal?: ConformalSettings;
  /** What a global model gets with the batch: cross-learning and its own options. */
  readonly batch: GlobalBatchOptions;
}

/** The data's natural seasonal cycles, by its frequency: the shortest one, and all of them. */
export interface NaturalSeasons {
  readonly season: number;
  readonly seasons: readonly number[];
}

export function taskSettings(config: ModelConfig | null, model: ModelEntry, natural: NaturalSeasons): TaskSettings {
  const shared = (config?.config ?? {}) as Record<string, unknown>;
  const configured = (shared.season_length ?? null) as number | number[] | null;
  const own = config && model.config?.options ? model.config.options(shared) : undefined;
  const global = model.capabilities.global;
  return {
    season: seasonLength(model, Array.isArray(configured) ? Math.min(...configured) : configured, natural.season),
    ...(model.capabilities.multipleSeasons && { seasonLengths: configured === null ? natural.seasons : Array.isArray(configured) ? configured : [configured] }),
    ...(!global && own !== undefined && { options: own }),
    ...(shared.intervals === 'conformal' && { conformal: { windows: shared.conformal_windows as number } }),
    batch: { crossLearning: shared.is_global === true, ...(global && own !== undefined && { options: own }) },
  };
}
