/**
 * The manifest of an exported TabPFN-TS (tools/export/tabpfn_ts.py): the fields every export has
 * (model-store.ts hands them in), the bar distribution's standard borders, and the regressor's
 * configuration the adapter implements (models/families/foundation/tabpfn-ts.ts): TabPFNRegressor's
 * defaults with a v2 checkpoint, and the ensemble's random draws (each member's preprocessing,
 * target transform and seed), which the regressor takes from its random_state alone and the
 * export reads from the package. A manifest asking for anything else is refused.
 */
import { z, type ZodRawShape } from 'zod';
import { periodicDetectorSchema } from './tabicl-manifest.ts';

const increasing = (l: readonly number[]): boolean => l.every((v, i) => i === 0 || v > l[i - 1]);

export const tabpfnTsManifestSchema = <Common extends ZodRawShape>(common: Common) =>
  z
    .object({
      ...common,
      model: z.literal('tabpfn-ts'),
      /** The bar distribution's borders in the standardised target space (buckets = borders - 1). */
      borders: z.array(z.number()).min(3).refine(increasing, 'must increase strictly'),
      regressor: z
        .object({
          n_estimators: z.number().int().positive(),
          softmax_temperature: z.number().positive(),
          /** Members are averaged as probabilities (TabPFNRegressor's default). */
          average_before_softmax: z.literal(false),
          random_state: z.number().int().nonnegative(),
          feature_shifts: z.array(z.number().int()),
          member_seeds: z.array(z.number().int().nonnegative()),
          preprocessing: z.array(z.enum(['quantile_uni', 'safepower'])),
          target_transforms: z.array(z.enum(['none', 'safepower'])),
        })
        .strict()
        .refine(
          (r) => [r.feature_shifts, r.member_seeds, r.preprocessing, r.target_transforms].every((l) => l.length === r.n_estimators),
          'feature_shifts, member_seeds, preprocessing and target_transforms must have one entry per estimator',
        ),
      /** Feature groups (column pairs) the graph's feature-embedding table holds. */
      max_groups: z.number().int().positive(),
      temporal_features: z.tuple([z.literal('index'), z.literal('calendar'), z.literal('auto_seasonal')]),
      periodic: periodicDetectorSchema,
    })
    .strict()
    .refine((m) => (m as { point_output?: string }).point_output === 'median', {
      message: "must be 'median' (TabPFNTSPipeline's default tabpfn_output_selection)",
      path: ['point_output'],
    });
