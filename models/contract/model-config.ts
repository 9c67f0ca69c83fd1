/**
 * A model's `model_config.config`: the zod schema a request's config is validated against (it
 * also types it and documents it in /openapi), and how a validated config becomes the model's
 * own options. Each family declares its own beside its code; the registry collects them, and the
 * request schema is built from the registry, so the engine never names a model.
 *
 * Settings several models share keep one name and one meaning everywhere, and the engine reads
 * them by that name: `season_length`, `intervals` with `conformal_windows`, and `is_global`.
 */
import { z } from 'zod';

export interface ModelConfigSpec {
  /** The `config` object of model_config for this model (strict: an unknown setting is refused). */
  readonly schema: z.ZodObject;
  /**
   * The model's own options from a validated config: carried on each task of a local model
   * (`ForecastTask.options`), or on the batch of a global one (`GlobalBatchOptions.options`).
   * Absent: the config holds shared settings only.
   */
  readonly options?: (config: Record<string, unknown>) => unknown;
}

/** A config spec whose options function reads the schema's own output type. */
export function modelConfig<S extends z.ZodObject>(schema: S, options?: (config: z.output<S>) => unknown): ModelConfigSpec {
  return { schema, ...(options && { options: options as (config: Record<string, unknown>) => unknown }) };
}

/** The seasonal period of a single-season model; null: the frequency's natural cycle. */
export const SeasonLength = z.int().min(1).nullable();

/** One seasonal period or a list of them, for a model of several seasons; null: the frequency's natural cycles. */
export const SeasonLengths = z.union([z.int().min(1), z.array(z.int().min(1)).min(1).max(10)]).nullable();

/**
 * Where a local model's quantiles come from (beyond the reference: conformal quantiles from
 * rolling-origin windows of the history, models/numerics/conformal.ts).
 */
export const intervalSettings = {
  intervals: z.enum(['model', 'conformal']).default('model').meta({
    description:
      "Where the quantiles come from: the model's own predictive distribution, or `conformal`: the model is refitted at `conformal_windows` rolling origins inside each history and its errors there give the quantiles (statsforecast's ConformalIntervals). Costs one fit per window.",
  }),
  conformal_windows: z.int().min(2).max(100).default(5).meta({
    description: 'Rolling-origin windows for conformal quantiles; a short history uses as many as fit, at least 2 (2 x horizon + 1 observations).',
  }),
};

/** A local model with no settings of its own: its season, and where its quantiles come from. */
export const localModelConfig = (seasonDefault: number | null) =>
  modelConfig(z.strictObject({ season_length: SeasonLength.default(seasonDefault), ...intervalSettings }));
