import { z } from 'zod';

/** The forecast response of the reference (2.5): the OpenAPI document and the engine's types come from here. */
export const MetricsSchema = z
  .object({
    mae: z.number().nullable(),
    mape: z.number().nullable(),
    crps: z.number().nullable(),
    wape: z.number().nullable(),
    scaled_bias: z.number().nullable(),
  })
  .meta({ id: 'Metrics', description: 'Accuracy over the forecast steps whose true value is known; null where undefined.' });

export const PredictionSchema = z
  .object({
    prediction: z
      .object({ mean: z.array(z.number()) })
      .catchall(z.array(z.number()))
      .meta({ description: '`mean` (always) and one key per requested quantile, written as its decimal string ("0.1").' }),
    index: z.array(z.string()),
    metrics: MetricsSchema.nullable(),
    refitted: z.boolean().optional().meta({
      description:
        "Present when the request sets a `refit` policy other than `every`: whether the model was fitted at this forecast creation date (false: it kept an earlier date's parameters).",
    }),
  })
  .meta({ id: 'Prediction' });

export const ForecastResponseSchema = z
  .object({
    status: z.enum(['completed', 'in_progress', 'failed']),
    series: z.array(z.array(PredictionSchema)).nullable(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  })
  .meta({ id: 'ForecastResponse' });

export type Metrics = z.output<typeof MetricsSchema>;
export type Prediction = z.output<typeof PredictionSchema>;
export type ForecastResponse = z.output<typeof ForecastResponseSchema>;
