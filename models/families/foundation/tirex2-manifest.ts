/**
 * The manifest of an exported TiRex-2 (tools/export/tirex2_export.py): the fields every export
 * has (model-store.ts hands them in), the native horizon, and the pipeline configuration the adapter
 * implements (models/families/foundation/tirex2.ts): the checkpoint's test-time augmentation switches and
 * the reference's `PostProcessorConfig` (tirex-2 0.4.0), recorded by the export.
 */
import { z, type ZodRawShape } from 'zod';

interface Levels {
  quantile_levels: number[];
  context_length: number;
  patch_size: number;
  point_output: string;
  future_length: number;
  forecast_config: { tta_sign_flip: boolean };
}

/** Whether every level q has 1 - q among the levels (sign-flip augmentation maps one to the other). */
export const symmetricLevels = (levels: readonly number[]): boolean => levels.every((q) => levels.some((p) => Math.abs(p - (1 - q)) <= 1e-6));

export const tirex2ManifestSchema = <Common extends ZodRawShape>(common: Common) =>
  z
    .object({
      ...common,
      model: z.literal('tirex-2'),
      /** The native horizon: the graph forecasts the `future_length` steps after the context. */
      future_length: z.number().int().positive(),
      forecast_config: z
        .object({
          tta_sign_flip: z.boolean(),
          tta_diff: z.boolean(),
          r2: z.number(),
          trend_min_r2: z.number().gt(0).lte(1),
          trend_threshold: z.number().positive(),
          sigma: z.number(),
          trend_window: z.number().gt(0).lte(1),
          diff_band_exponent: z.number().nonnegative(),
          diff_band_scale: z.number().positive(),
          raw_band_exponent: z.number().nonnegative(),
          raw_band_scale: z.number().positive(),
        })
        .strict(),
    })
    .strict()
    .superRefine((raw, ctx) => {
      const m = raw as unknown as Levels;
      if (m.context_length % m.patch_size !== 0 || m.future_length % m.patch_size !== 0)
        ctx.addIssue({ code: 'custom', message: 'context_length and future_length must be multiples of patch_size', path: ['patch_size'] });
      if (!m.quantile_levels.includes(0.5)) ctx.addIssue({ code: 'custom', message: 'must include 0.5 (the point forecast)', path: ['quantile_levels'] });
      if (m.point_output !== 'median') ctx.addIssue({ code: 'custom', message: "must be 'median' (the reference's 0.5 level)", path: ['point_output'] });
      if (m.forecast_config.tta_sign_flip && !symmetricLevels(m.quantile_levels))
        ctx.addIssue({ code: 'custom', message: 'sign-flip augmentation needs a symmetric set of levels', path: ['quantile_levels'] });
    });
