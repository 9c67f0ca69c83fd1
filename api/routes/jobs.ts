import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodOpenApiPathItemObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { completedJobBody } from '../jobs/completed-body.ts';
import { idempotencyKey, REPLAYED_HEADER, requestFingerprint, type IdempotentSubmissions } from '../idempotent-submissions.ts';
import type { JobService } from '../jobs/job-service.ts';
import type { QuotaPolicy } from '../quotas.ts';
import { jobKind } from '../../store/layout.ts';
import { IdempotencyHeader, JobIdParams, JobList, JobListQuery, JobPageQuery, JobStatusResponse, submitErrors, submittedResponse } from '../schemas/jobs.ts';
import { ModelQuery } from '../schemas/query.ts';
import { BODY_ERRORS, dependencyErrors, ERRORS, JSON_BODY_MALFORMED, jobErrors, jsonResponse, overQuota, problemResponse } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';
import { controlPaths, deleteOperation, jobControlRoutes } from './job-control.ts';

/** Both the reference's current prefix and the earlier variant's (reference 9.3). */
export const JOB_PREFIXES = ['/forecast-jobs', '/backtest-jobs'] as const;

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

/** Job endpoints under one prefix; the earlier variant's prefix is documented as deprecated. */
function prefixPaths(prefix: (typeof JOB_PREFIXES)[number], query: ReturnType<typeof ModelQuery>): [string, ZodOpenApiPathItemObject][] {
  const deprecated = prefix !== '/forecast-jobs';
  const id = prefix.slice(1).replace('-jobs', '');
  const path = { path: JobIdParams };
  return [
    [
      prefix,
      {
        post: {
          operationId: `${id}SubmitJob`,
          deprecated,
          summary: 'Submit a forecast or backtest job (same body as POST /forecast).',
          requestParams: { query, header: IdempotencyHeader },
          requestBody: { required: true, content: { 'application/json': { schema: ForecastRequest } } },
          responses: {
            '200': submittedResponse,
            ...BODY_ERRORS,
            '413': problemResponse(
              `The body is larger than MAX_BODY_BYTES (\`payload_too_large\`), ${overQuota('`upload_bytes`, `series_per_request`, `forecasts_per_job`')}.`,
            ),
            ...ERRORS,
            ...dependencyErrors,
            ...submitErrors(JSON_BODY_MALFORMED),
          },
        },
        get: {
          operationId: `${id}ListJobs`,
          deprecated,
          summary: "The caller's jobs, newest first.",
          requestParams: { query: JobListQuery },
          responses: { '200': jsonResponse('Jobs, newest first.', JobList), ...ERRORS, ...dependencyErrors },
        },
      },
    ],
    [
      `${prefix}/{job_id}`,
      {
        get: {
          operationId: `${id}GetJob`,
          deprecated,
          summary: 'Poll a job: in_progress (with progress), completed (with series, pageable) or failed (with error).',
          requestParams: { ...path, query: JobPageQuery },
          responses: { '200': jsonResponse('The job.', JobStatusResponse), ...ERRORS, ...jobErrors },
        },
        delete: deleteOperation(id, deprecated),
      },
    ],
    ...controlPaths(prefix, id, deprecated),
  ];
}

/** The job endpoints in /openapi, under both prefixes. */
export function jobPaths(query: ReturnType<typeof ModelQuery>): ZodOpenApiPathsObject {
  return Object.fromEntries(JOB_PREFIXES.flatMap((prefix) => prefixPaths(prefix, query)));
}
