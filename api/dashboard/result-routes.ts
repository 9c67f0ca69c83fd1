import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import type { ZodOpenApiPathItemObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { creationDates } from '../../engine/plan.ts';
import { quantileKey } from '../../engine/quantile-key.ts';
import { jobKind, type JobKind, type JobMeta } from '../../store/layout.ts';
import { API_JOB_KINDS } from '../jobs/job-kinds.ts';
import type { JobService } from '../jobs/job-service.ts';
import { HttpError } from '../problem.ts';
import { JobIdParams } from '../schemas/jobs.ts';
import { ERRORS, jobErrors, jsonResponse, problemResponse } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';
import { JobRequests } from './job-requests.ts';
import {
  LeaderboardResponse,
  MetricsPageQuery,
  MetricsPageResponse,
  SeriesParams,
  SeriesResponse,
  type LeaderboardEntry,
  type SeriesForecast,
} from './schemas.ts';

/** How many of the caller's jobs on the same data a leaderboard compares (the newest). */
export const MAX_COMPARED_JOBS = 20;
/** How many of the caller's newest jobs are searched for ones on the same data. */
const SEARCHED_JOBS = 1000;

/**
 * What the dashboard reads beyond the job endpoints, as JSON any client may use: a job's
 * leaderboard and metrics table (both kinds of job), and one series of a forecast job with its
 * history (the job's request) and forecasts (its result Parquet).
 */
export async function jobResultRoutes(app: FastifyInstance, opts: { jobs: JobService }): Promise<void> {
  const { jobs } = opts;
  const requests = new JobRequests(jobs.store);

  // Under each kind's prefix; the earlier /backtest-jobs variant has none of these views.
  for (const kind of ['forecast', 'beta'] as const) {
    const { prefix, metricsPageQuery, comparesSameData } = API_JOB_KINDS[kind];

    app.get(`${prefix}/:job_id/leaderboard`, async (request) => {
      const { job_id } = parseOr422(JobIdParams, request.params, 'path');
      const meta = await jobs.meta(job_id, request.principal, kind);
      const state = await jobs.state(job_id);
      if (state.status !== 'completed')
        throw new HttpError(409, 'job_not_completed', `job '${job_id}' is ${state.status}; its leaderboard is computed once it has completed`);
      const compared = comparesSameData ? [meta, ...(await sameDataJobs(jobs, requests, meta, request.principal))] : [meta];
      const rows = (await Promise.all(compared.map(async (m) => (await jobs.store.accuracy(m)).map((row) => ({ job_id: m.job_id, ...row }))))).flat();
      return { job_id, jobs: compared.map((m) => m.job_id), entries: ranked(rows) };
    });

    app.get(`${prefix}/:job_id/metrics`, async (request) => {
      const { job_id } = parseOr422(JobIdParams, request.params, 'path');
      // A beta job's series are named by their identifier columns, not by position: its query has no series_index.
      const page: z.output<typeof MetricsPageQuery> = parseOr422(metricsPageQuery, request.query, 'query');
      const meta = await jobs.meta(job_id, request.principal, kind);
      const found = await jobs.store.metricsPage(meta, { offset: page.offset, limit: page.limit, seriesIndex: page.series_index });
      return { job_id, offset: page.offset, limit: page.limit, ...found };
    });
  }

  app.get(`${API_JOB_KINDS.forecast.prefix}/:job_id/series/:series_index`, async (request) => {
    const { job_id, series_index } = parseOr422(SeriesParams, request.params, 'path');
    const meta = await jobs.meta(job_id, request.principal, 'forecast');
    const body = await requests.request(job_id);
    if (series_index >= body.series.length) {
      const message = `job '${job_id}' has ${body.series.length} series: give 0 to ${body.series.length - 1}`;
      // The path is well formed; the series it names does not exist (as for an unknown job id).
      throw new HttpError(404, 'not_found', message, [{ path: 'path.series_index', message }]);
    }
    const serie = body.series[series_index];
    const [written] = await jobs.store.predictions(meta, series_index, series_index + 1);
    const dates = creationDates(serie);
    const forecasts: SeriesForecast[] = [];
    dates.forEach((fcd, fcdIndex) => {
      const found = written[fcdIndex];
      if (!found) return;
      const quantiles = Object.fromEntries(meta.quantiles.map((level) => [quantileKey(level), found.prediction[quantileKey(level)]]));
      const actual = found.index.map((_, h) => serie.target[fcd + h] ?? null);
      forecasts.push({
        fcd_index: fcdIndex,
        fcd,
        created_at: serie.index[fcd - 1],
        index: found.index,
        mean: found.prediction.mean,
        quantiles,
        actual,
        metrics: found.metrics,
      });
    });
    return {
      job_id,
      series_index,
      total_series: body.series.length,
      freq: body.freq,
      horizon: body.horizon,
      quantiles: meta.quantiles,
      only_as_context: serie.only_as_context,
      history: { index: serie.index, target: serie.target },
      forecasts,
    };
  });
}

/** The caller's other completed jobs of the same kind on the same data and quantile levels, newest first. */
async function sameDataJobs(jobs: JobService, requests: JobRequests, meta: JobMeta, principal: string): Promise<JobMeta[]> {
  const levels = (m: JobMeta) => [...m.quantiles].sort((a, b) => a - b).join(',');
  // Cheap checks first (counts, levels): only jobs that pass them have their request read.
  const candidates = (await jobs.list(principal, SEARCHED_JOBS)).filter(
    (m) => m.job_id !== meta.job_id && jobKind(m) === jobKind(meta) && m.series === meta.series && m.forecasts === meta.forecasts && levels(m) === levels(meta),
  );
  if (candidates.length === 0) return [];
  const mine = await requests.fingerprint(meta.job_id);
  const same: JobMeta[] = [];
  for (const candidate of candidates) {
    if (same.length >= MAX_COMPARED_JOBS - 1) break;
    // A job deleted meanwhile, or one whose request cannot be read, is simply not compared.
    const fingerprint = await requests.fingerprint(candidate.job_id).catch(() => null);
    if (fingerprint !== mine) continue;
    if ((await jobs.state(candidate.job_id)).status === 'completed') same.push(candidate);
  }
  return same;
}

/**
 * Smallest CRPS first (MAE where a job has no quantiles), rows without either last, ties in job
 * order; a beta job's targets are ranked each on their own.
 */
function ranked(rows: Omit<LeaderboardEntry, 'rank'>[]): LeaderboardEntry[] {
  const score = (r: Omit<LeaderboardEntry, 'rank'>) => r.crps ?? r.mae ?? Infinity;
  const sorted = rows
    .map((row, order) => ({ row, order }))
    .sort((a, b) => (a.row.target ?? '').localeCompare(b.row.target ?? '') || score(a.row) - score(b.row) || a.order - b.order);
  const ranks = new Map<string | null, number>();
  return sorted.map(({ row }) => {
    const rank = (ranks.get(row.target) ?? 0) + 1;
    ranks.set(row.target, rank);
    return { rank, ...row };
  });
}

/** These views in the OpenAPI document. */
export function resultViewPaths(): ZodOpenApiPathsObject {
  const errors = { ...ERRORS, ...jobErrors };
  const problem = problemResponse;
  const json = jsonResponse;
  const path = { path: JobIdParams };
  const views = (kind: JobKind, { prefix, metricsPageQuery } = API_JOB_KINDS[kind]): [string, ZodOpenApiPathItemObject][] => [
    [
      `${prefix}/{job_id}/leaderboard`,
      {
        get: {
          operationId: `${kind}Leaderboard`,
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
          operationId: `${kind}MetricsPage`,
          summary:
            "A page of the job's metrics, one row per forecast (series and creation date), as its metrics Parquet has them; rows appear as the job runs.",
          requestParams: { ...path, query: metricsPageQuery },
          responses: { '200': json('The rows.', MetricsPageResponse), ...errors },
        },
      },
    ],
  ];
  return Object.fromEntries([
    ...views('forecast'),
    ...views('beta'),
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
  ]);
}
