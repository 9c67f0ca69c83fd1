import { BETA_JOBS } from '../routes/beta-jobs.ts';
import { JobIdParams } from '../routes/jobs.ts';
import { BetaMetricsPageQuery, LeaderboardResponse, MetricsPageQuery, MetricsPageResponse, SeriesParams, SeriesResponse } from './schemas.ts';

type Responses = Record<string, unknown>;

/**
 * The job result views (api/dashboard/result-routes.ts) in the OpenAPI document: `errors` are
 * the answers every job operation documents, `problem` makes one more.
 */
export function dashboardPaths(errors: Responses, problem: (description: string) => unknown): [string, unknown][] {
  const path = { path: JobIdParams };
  const json = (description: string, schema: unknown) => ({ description, content: { 'application/json': { schema } } });
  const views = (prefix: string, id: string): [string, unknown][] => [
    [
      `${prefix}/{job_id}/leaderboard`,
      {
        get: {
          operationId: `${id}Leaderboard`,
          summary:
            "The completed job's model ranked with the caller's other completed jobs on the same data: mae, mape, crps, wape and scaled_bias pooled over every scored step, computed by DuckDB from the result Parquet.",
          requestParams: path,
          responses: {
            '200': json('The leaderboard.', LeaderboardResponse),
            '409': problem('The job has not completed (`job_not_completed`).'),
            ...errors,
          },
        },
      },
    ],
    [
      `${prefix}/{job_id}/metrics`,
      {
        get: {
          operationId: `${id}MetricsPage`,
          summary:
            "A page of the job's metrics, one row per forecast (series and creation date), as its metrics Parquet has them; rows appear as the job runs.",
          requestParams: { ...path, query: id === 'beta' ? BetaMetricsPageQuery : MetricsPageQuery },
          responses: { '200': json('The rows.', MetricsPageResponse), ...errors },
        },
      },
    ],
  ];
  return [
    ...views('/forecast-jobs', 'forecast'),
    ...views(BETA_JOBS, 'beta'),
    [
      '/forecast-jobs/{job_id}/series/{series_index}',
      {
        get: {
          operationId: 'forecastJobSeries',
          summary:
            "One series of a forecast job: its history (from the job's request) and its forecasts by creation date with their actuals and metrics, as written so far.",
          requestParams: { path: SeriesParams },
          responses: {
            '200': json('The series.', SeriesResponse),
            ...errors,
            '404': problem('No such job, or the job has no series at `series_index` (`not_found`; the detail says how many it has).'),
          },
        },
      },
    ],
  ];
}
