import type { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { checkInputColumns } from '../../engine/beta/prepare.ts';
import type { ResolvedBetaQuery } from '../../engine/beta/resolved-query.ts';
import type { BetaSources } from '../../engine/beta/table-sources.ts';
import { invalidRequest, requestField } from '../../engine/errors.ts';
import { withConnection } from '../../engine/sql.ts';
import type { ModelEntry } from '../../models/contract/model-registry.ts';
import { betaKind } from '../../store/job-kinds.ts';
import { storedSources } from '../beta/upload-sources.ts';
import { newUploadDir, removeUpload, type Upload } from '../beta/upload.ts';
import { idempotencyKey, REPLAYED_HEADER, requestFingerprint, type IdempotentSubmissions } from '../idempotent-submissions.ts';
import { BETA_JOBS } from '../jobs/job-kinds.ts';
import type { JobService } from '../jobs/job-service.ts';
import type { QuotaPolicy } from '../quotas.ts';
import { BETA_ROOTS } from '../problem.ts';
import { betaBody, betaUploadErrors } from '../schemas/beta-upload.ts';
import { IdempotencyHeader, JobIdParams, JobProgressSchema, submitErrors, submittedResponse } from '../schemas/jobs.ts';
import { NoQuery, type betaModelQuery } from '../schemas/query.ts';
import { dependencyErrors, ERRORS, jobErrors, jsonResponse, MULTIPART_MALFORMED } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';
import { controlPaths, deleteOperation, jobControlRoutes } from './job-control.ts';

/** A beta call's body, received and checked as far as is cheap (routes/beta.ts). */
export interface CheckedUpload {
  /** The model, checked against the query: runnable here, and able to use what the query gives. */
  model: ModelEntry;
  query: ResolvedBetaQuery;
  upload: Upload;
  sources: BetaSources;
}

const BetaJobStatus = z
  .object({
    job_id: z.string(),
    status: z.enum(['in_progress', 'completed', 'failed']),
    model: z.string(),
    created_at: z.string(),
    progress: JobProgressSchema.optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    results: z
      .object({ predictions: z.string(), metrics: z.string() })
      .optional()
      .meta({ description: 'Once completed: where to download the results as Parquet.' }),
  })
  .meta({ id: 'BetaJobStatus' });

/**
 * Identifiers become result columns under their own names, so a name the results use for
 * something else is refused before the job exists (DuckDB's names ignore case).
 */
export function refuseReservedIdentifiers(query: ResolvedBetaQuery): void {
  const columns = betaKind.resultColumns;
  const reserved = new Set<string>(columns);
  const clashes = query.roles.identifiers.filter((name) => reserved.has(name.toLowerCase()) || /^q_/i.test(name));
  if (clashes.length === 0) return;
  const message = (name: string) =>
    `identifier '${name}' would share its name with a result column of beta jobs (${columns.join(', ')}, q_*); rename the column (or use POST /v1-beta/forecast)`;
  throw invalidRequest(
    message(clashes[0]),
    clashes.map((name) => requestField([...query.rolesPath, name], message(name))),
  );
}

/**
 * Beta backtests as jobs: the synchronous endpoint's body, checked the same way as far as is
 * cheap (query, model, parts, the input's columns), then stored and run by the job workflow.
 * Status, cancel and Parquet downloads work as for forecast jobs.
 */
export function betaJobRoutes(
  app: FastifyInstance,
  opts: {
    jobs: JobService;
    db: DuckDBInstance;
    dataDir: string;
    receive: (request: FastifyRequest, dir: string) => Promise<CheckedUpload>;
    quotas: QuotaPolicy;
    submissions: IdempotentSubmissions;
  },
): void {
  const { jobs } = opts;

  app.post(BETA_JOBS, { config: { fieldRoots: BETA_ROOTS } }, async (request, reply) => {
    // Checked first: a malformed key costs the client no upload.
    const key = idempotencyKey(request);
    const dir = newUploadDir(opts.dataDir);
    try {
      const { model, query, upload, sources } = await opts.receive(request, dir);
      refuseReservedIdentifiers(query);
      await withConnection(opts.db, (c) => checkInputColumns(c, query, sources));
      // The same request: the same query string, query part and data parts (by name, with their bytes' hashes).
      const parts = [...upload.parts.values()].map(({ name, bytes, sha256 }) => ({ name, bytes, sha256 })).sort((a, b) => (a.name < b.name ? -1 : 1));
      const fingerprint = requestFingerprint({ kind: 'beta', query: request.query, body: upload.query, parts });
      const { jobId, replayed } = await opts.submissions.submit(request.principal, key, fingerprint, async (jobId) => {
        const meta = await jobs.submitBeta(
          {
            query: upload.query,
            model: model.name,
            principal: request.principal,
            quantiles: query.levels,
            sources: await storedSources(query.parsed, upload),
            files: [...upload.parts.values()].map((part) => part.file),
          },
          { jobId, quotas: opts.quotas.of(request.principal) },
        );
        return meta.job_id;
      });
      if (replayed) reply.header(REPLAYED_HEADER, 'true');
      return { job_id: jobId, call_id: jobId, status: 'in_progress' };
    } finally {
      await removeUpload(dir);
    }
  });

  app.get(`${BETA_JOBS}/:job_id`, async (request) => {
    const { job_id } = parseOr422(JobIdParams, request.params, 'path');
    parseOr422(NoQuery, request.query, 'query');
    const meta = await jobs.meta(job_id, request.principal, 'beta');
    const state = await jobs.state(job_id);
    const about = { job_id, model: meta.model, created_at: meta.created_at };
    if (state.status !== 'completed') return { ...about, ...state };
    return {
      ...about,
      status: 'completed',
      results: { predictions: `${BETA_JOBS}/${job_id}/predictions.parquet`, metrics: `${BETA_JOBS}/${job_id}/metrics.parquet` },
    };
  });

  jobControlRoutes(app, BETA_JOBS, jobs, 'beta');
}

/** Beta backtests as jobs in /openapi: the synchronous body in, status, cancel and Parquet results out. */
export function betaJobPaths(query: ReturnType<typeof betaModelQuery>): ZodOpenApiPathsObject {
  return {
    [BETA_JOBS]: {
      post: {
        operationId: 'betaSubmitJob',
        summary: 'Submit a beta backtest as a job (same body as POST /v1-beta/forecast); results as Parquet.',
        requestParams: { query, header: IdempotencyHeader },
        requestBody: betaBody(),
        responses: {
          '200': submittedResponse,
          ...betaUploadErrors,
          ...ERRORS,
          ...dependencyErrors,
          ...submitErrors(MULTIPART_MALFORMED),
        },
      },
    },
    [`${BETA_JOBS}/{job_id}`]: {
      get: {
        operationId: 'betaGetJob',
        summary: 'Poll a beta job: in_progress (with progress), completed (with its download links) or failed (with error).',
        requestParams: { path: JobIdParams },
        responses: { '200': jsonResponse('The job.', BetaJobStatus), ...ERRORS, ...jobErrors },
      },
      delete: deleteOperation('beta', false),
    },
    ...Object.fromEntries(controlPaths(BETA_JOBS, 'beta', false)),
  };
}
