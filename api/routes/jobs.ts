import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { PredictionSchema } from '../../engine/response-schema.ts';
import { completedJobBody } from '../jobs/completed-body.ts';
import { idempotencyKey, REPLAYED_HEADER, requestFingerprint, type IdempotentSubmissions } from '../idempotency.ts';
import type { JobService } from '../jobs/job-service.ts';
import type { QuotaPolicy } from '../quotas.ts';
import { jobKind, type JobKind } from '../../store/layout.ts';
import { HttpError } from '../problem.ts';
import { ModelQuery } from '../query-schemas.ts';
import { parseOr422 } from '../validation.ts';

/** Both the reference's current prefix and the earlier variant's (reference 9.3). */
export const JOB_PREFIXES = ['/forecast-jobs', '/backtest-jobs'] as const;

export const JobIdParams = z.strictObject({ job_id: z.string() });

export const JobPageQuery = z.strictObject({
  offset: z.coerce.number().int().min(0).default(0).meta({ description: 'First series to return (0-based).' }),
  limit: z.coerce.number().int().min(1).optional().meta({ description: 'Number of series to return; all when omitted.' }),
});

export const JobProgressSchema = z
  .object({ done: z.int(), total: z.int().nullable(), chunksDone: z.int(), chunks: z.int().nullable() })
  .nullable()
  .meta({ id: 'JobProgress', description: 'Forecasts done out of the total; null when no worker answered in time.' });

export const JobStatusResponse = z
  .object({
    job_id: z.string(),
    status: z.enum(['in_progress', 'completed', 'failed']),
    series: z.array(z.array(PredictionSchema)).nullable().meta({ description: 'As in the synchronous response; null unless completed.' }),
    progress: JobProgressSchema.optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    total_series: z.int().optional(),
    offset: z.int().optional(),
    limit: z.int().nullable().optional(),
  })
  .meta({ id: 'JobStatus' });

export const JobListQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

export const JobSubmitted = z
  .object({
    job_id: z.string(),
    call_id: z.string().meta({ description: 'The same identifier, under the name the reference example uses.' }),
    status: z.literal('in_progress'),
  })
  .meta({ id: 'JobSubmitted' });

/**
 * Jobs (reference 4.2, 4.3), plus what a data engineer expects beyond it: cancel, list, and
 * results as Parquet.
 */
export async function jobRoutes(
  app: FastifyInstance,
  opts: { defaultModel: string; jobs: JobService; quotas: QuotaPolicy; submissions: IdempotentSubmissions },
): Promise<void> {
  const { jobs, submissions } = opts;
  const querySchema = ModelQuery(opts.defaultModel);
  const stopSweeping = submissions.sweepExpired((err) => app.log.warn({ err }, 'removing expired idempotency records failed; it runs again later'));
  app.addHook('onClose', async () => stopSweeping());

  for (const prefix of JOB_PREFIXES) {
    app.post(prefix, async (request, reply) => {
      const key = idempotencyKey(request);
      const query = parseOr422(querySchema, request.query, 'query');
      const body = parseOr422(ForecastRequest, request.body, 'body');
      // The same request: the same model and options, and the same JSON body (however its keys are ordered).
      const fingerprint = requestFingerprint({ kind: 'forecast', query, body: request.body });
      const { jobId, replayed } = await submissions.submit(request.principal, key, fingerprint, async (jobId) => {
        const meta = await jobs.submit(body, query.model, request.principal, { jobId, quotas: opts.quotas.of(request.principal) });
        return meta.job_id;
      });
      if (replayed) reply.header(REPLAYED_HEADER, 'true');
      return { job_id: jobId, call_id: jobId, status: 'in_progress' };
    });

    app.get(prefix, async (request) => {
      const { limit } = parseOr422(JobListQuery, request.query, 'query');
      const metas = await jobs.list(request.principal, limit);
      const states = await Promise.all(metas.map((m) => jobs.state(m.job_id)));
      return {
        jobs: metas.map((m, i) => ({
          job_id: m.job_id,
          kind: jobKind(m),
          model: m.model,
          created_at: m.created_at,
          series: m.series,
          forecasts: m.forecasts,
          ...states[i],
        })),
      };
    });

    app.get(`${prefix}/:job_id`, async (request, reply) => {
      const { job_id } = parseOr422(JobIdParams, request.params, 'path');
      const page = parseOr422(JobPageQuery, request.query, 'query');
      const meta = await jobs.meta(job_id, request.principal, 'forecast');
      const state = await jobs.state(job_id);
      if (state.status !== 'completed') return { job_id, ...state, series: null };
      return reply
        .type('application/json; charset=utf-8')
        .send(Readable.from(completedJobBody(jobs.store, meta, { offset: page.offset, limit: page.limit ?? null })));
    });

    jobControlRoutes(app, prefix, jobs, 'forecast');
  }
}

/** Cancel, delete and the Parquet downloads, the same for both kinds of job (each under its own prefix). */
export function jobControlRoutes(app: FastifyInstance, prefix: string, jobs: JobService, kind: JobKind): void {
  app.post(`${prefix}/:job_id/cancel`, async (request) => {
    const { job_id } = parseOr422(JobIdParams, request.params, 'path');
    await jobs.meta(job_id, request.principal, kind);
    const before = await jobs.state(job_id);
    if (before.status !== 'in_progress')
      throw new HttpError(409, 'job_finished', `job '${job_id}' has already finished (${before.status}); there is nothing to cancel`);
    await jobs.cancel(job_id);
    return { job_id, status: 'cancelling' };
  });

  app.delete(`${prefix}/:job_id`, async (request) => {
    const { job_id } = parseOr422(JobIdParams, request.params, 'path');
    await jobs.meta(job_id, request.principal, kind);
    await jobs.remove(job_id);
    return { job_id, status: 'deleted' };
  });

  for (const table of ['predictions', 'metrics'] as const) {
    app.get(`${prefix}/:job_id/${table}.parquet`, async (request, reply) => {
      const { job_id } = parseOr422(JobIdParams, request.params, 'path');
      const meta = await jobs.meta(job_id, request.principal, kind);
      const state = await jobs.state(job_id);
      if (state.status !== 'completed')
        throw new HttpError(409, 'job_not_completed', `job '${job_id}' is ${state.status}; its results can be downloaded once it has completed`);
      const file = await jobs.store.export(meta, table);
      if (!file) throw new HttpError(404, 'not_found', `job '${job_id}' has no ${table}`);
      return reply.type('application/vnd.apache.parquet').header('content-disposition', `attachment; filename="${job_id}-${table}.parquet"`).send(file);
    });
  }
}
