import { z } from 'zod';
import { MetricsSchema } from '../../engine/response-schema.ts';

/**
 * The JSON endpoints the dashboard reads (and any client may): a job's leaderboard, its metrics
 * table and one series' history with its forecasts. These schemas validate the parameters and
 * generate the OpenAPI document.
 */

export const SeriesParams = z.strictObject({
  job_id: z.string(),
  series_index: z.coerce.number().int().min(0).meta({ description: 'Position of the series in the job request (0-based).' }),
});

export const MetricsPageQuery = z.strictObject({
  offset: z.coerce.number().int().min(0).default(0).meta({ description: 'First row to return (0-based).' }),
  limit: z.coerce.number().int().min(1).max(1000).default(100).meta({ description: 'Number of rows to return.' }),
  series_index: z.coerce.number().int().min(0).optional().meta({ description: 'Only this series (0-based position in the job request).' }),
});

/** A beta job's metrics page: its series are named by their identifier columns, so there is no series_index. */
export const BetaMetricsPageQuery = MetricsPageQuery.omit({ series_index: true });

const Metric = z.number().nullable();

export const LeaderboardEntry = z
  .object({
    rank: z.int().meta({ description: '1 for the smallest CRPS (MAE where CRPS is null), ties in job order; per target for a beta job.' }),
    job_id: z.string(),
    model: z.string(),
    target: z.string().nullable().meta({ description: "A beta job's target column; null for forecast jobs." }),
    scored_steps: z.int().meta({ description: 'Forecast steps whose actual value is known: the T of the metrics.' }),
    mae: Metric,
    mape: Metric,
    crps: Metric,
    wape: Metric,
    scaled_bias: Metric,
  })
  .meta({ id: 'LeaderboardEntry' });

export const LeaderboardResponse = z
  .object({
    job_id: z.string(),
    jobs: z.array(z.string()).meta({
      description:
        "The jobs compared: this job and the caller's other completed forecast jobs on the same data (series, fcds, horizon, frequency and quantile levels), newest first, at most 20. A beta job is ranked alone.",
    }),
    entries: z.array(LeaderboardEntry),
  })
  .meta({
    id: 'Leaderboard',
    description:
      "Each job's model ranked by accuracy pooled over every scored step (docs/operations.md, Metrics, with T = all the job's scored steps), computed by DuckDB from the jobs' prediction Parquet.",
  });

const Cell = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const MetricsPageResponse = z
  .object({
    job_id: z.string(),
    total: z.int().meta({ description: 'Rows matching (all forecasts, or those of `series_index`).' }),
    offset: z.int(),
    limit: z.int(),
    columns: z.array(z.string()).meta({ description: "The metrics Parquet's columns (docs/operations.md, Results for analysts)." }),
    rows: z.array(z.record(z.string(), Cell)).meta({ description: 'One row per forecast; timestamps as ISO 8601 in UTC.' }),
  })
  .meta({ id: 'JobMetricsPage' });

export const SeriesForecast = z
  .object({
    fcd_index: z.int(),
    fcd: z.int().meta({ description: 'The creation date as a history length.' }),
    created_at: z.string().meta({ description: 'The index entry of the last observation the forecast saw.' }),
    index: z.array(z.string()),
    mean: z.array(z.number()),
    quantiles: z.record(z.string(), z.array(z.number())),
    actual: z.array(z.number().nullable()).meta({ description: "The target's value at each step, null beyond its end." }),
    metrics: MetricsSchema.nullable(),
  })
  .meta({ id: 'SeriesForecast' });

export const SeriesResponse = z
  .object({
    job_id: z.string(),
    series_index: z.int(),
    total_series: z.int(),
    freq: z.string(),
    horizon: z.int(),
    quantiles: z.array(z.number()),
    only_as_context: z.boolean(),
    history: z.object({ index: z.array(z.string()), target: z.array(z.number()) }).meta({ description: 'The series as the request gave it.' }),
    forecasts: z.array(SeriesForecast).meta({ description: 'The forecasts written so far, by creation date (all of them once the job completed).' }),
  })
  .meta({ id: 'JobSeries' });

export type LeaderboardEntry = z.output<typeof LeaderboardEntry>;
export type SeriesForecast = z.output<typeof SeriesForecast>;
