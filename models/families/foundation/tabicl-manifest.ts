/**
 * The manifest of an exported TabICL (tools/export/tabicl_forecast.py): the fields every export
 * has (model-store.ts hands them in), and the pipeline configuration the adapter implements
 * (models/families/foundation/tabicl.ts): the regressor's ensemble and the periodic detector's settings, recorded by the export so that a manifest asking for anything else is refused.
 */
import { z, type ZodRawShape } from 'zod';

/** The FFT period detector's settings (tabicl-features.ts), shared by TabICL's and TabPFN-TS's pipelines. */
export const periodicDetectorSchema = z
  .object({
    max_top_k: z.number().int().positive(),
    detrend_type: z.literal('linear'),
    zero_padding_factor: z.number().int().positive(),
    magnitude_threshold: z.number().positive().lt(1),
  })
  .strict();

export const tabiclManifestSchema = <Common extends ZodRawShape>(common: Common) =>
  z
    .object({
      ...common,
      model: z.literal('tabicl'),
      /** Quantiles the network outputs, at levels i / (num_quantiles + 1). */
      num_quantiles: z.number().int().min(8),
      /** TabICLRegressor's ensemble (tabicl-ensemble.ts, tabicl-preprocess.ts implement these values). */
      regressor: z
        .object({
          n_estimators: z.number().int().positive(),
          norm_methods: z.array(z.enum(['none', 'power'])).min(1),
          feat_shuffle_method: z.enum(['latin', 'none']),
          outlier_threshold: z.number().positive(),
          random_state: z.number().int().nonnegative(),
        })
        .strict(),
      temporal_features: z.tuple([z.literal('index'), z.literal('datetime'), z.literal('periodic')]),
      periodic: periodicDetectorSchema,
    })
    .strict()
    .refine((m) => (m as { point_output?: string }).point_output === 'mean', {
      message: "must be 'mean' (TabICLForecaster's default point_estimate)",
      path: ['point_output'],
    });
