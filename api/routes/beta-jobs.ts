import type { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { checkInputColumns } from '../../engine/beta/prepare.ts';
import { inputColumns, summariseRoles, type BetaQuery } from '../../engine/beta/query-fields.ts';
import type { BetaSources } from '../../engine/beta/sources.ts';
import { invalidRequest, requestField } from '../../engine/errors.ts';
import { withConnection } from '../../engine/sql.ts';
import { quantileLevels } from '../../engine/tasks.ts';
import { BETA_RESULT_COLUMNS } from '../../store/beta-results.ts';
import { storedSources } from '../beta/sources.ts';
import { newUploadDir, removeUpload, type Upload } from '../beta/upload.ts';
import type { JobService } from '../jobs/job-service.ts';
import { BETA_ROOTS } from '../problem.ts';
import { parseOr422 } from '../validation.ts';
import { JobIdParams, JobProgressSchema, jobControlRoutes } from './jobs.ts';

/** A beta call's body, received and checked as far as is cheap (routes/beta.ts). */
export interface CheckedUpload {
  model: string;
  query: BetaQuery;
  upload: Upload;
  sources: BetaSources;
}

export const BETA_JOBS = '/v1-beta/forecast-jobs';

export const BetaJobStatus = z
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
function refuseReservedIdentifiers(query: BetaQuery): void {
  const reserved = new Set<string>(BETA_RESULT_COLUMNS);
  const key = query.input.columns ? 'columns' : 'schema';
  const clashes = summariseRoles(inputColumns(query)).identifiers.filter((name) => reserved.has(name.toLowerCase()) || /^q_/i.test(name));
  if (clashes.length === 0) return;
  const message = (name: string) =>
    `identifier '${name}' would share its name with a result column of beta jobs (${BETA_RESULT_COLUMNS.join(', ')}, q_*); rename the column (or use POST /v1-beta/forecast)`;
  throw invalidRequest(
    message(clashes[0]),
    clashes.map((name) => requestField(['input', key, name], message(name))),
  );
}

/**
 * Beta backtests as jobs: the synchronous endpoint's body, checked the same way as far as is
 * cheap (query, model, parts, the input's columns), then stored and run by the job workflow.
 * Status, cancel and Parquet downloads work as for forecast jobs.
 */
export function betaJobRoutes(
  app: FastifyInstance,
  opts: { jobs: JobService; db: DuckDBInstance; dataDir: string; receive: (request: FastifyRequest, dir: string) => Promise<CheckedUpload> },
): void {
  const { jobs } = opts;

  app.post(BETA_JOBS, { config: { fieldRoots: BETA_ROOTS } }, async (request) => {
    const dir = newUploadDir(opts.dataDir);
    try {
      const { model, query, upload, sources } = await opts.receive(request, dir);
      refuseReservedIdentifiers(query);
      await withConnection(opts.db, (c) => checkInputColumns(c, query, sources));
      const meta = await jobs.submitBeta({
        query: upload.query,
        model,
        principal: request.principal,
        quantiles: quantileLevels(query.quantiles),
        sources: await storedSources(query, upload),
        files: [...upload.parts.values()].map((part) => part.file),
      });
      return { job_id: meta.job_id, call_id: meta.job_id, status: 'in_progress' };
    } finally {
      await removeUpload(dir);
    }
  });

  app.get(`${BETA_JOBS}/:job_id`, async (request) => {
    const { job_id } = parseOr422(JobIdParams, request.params, 'path');
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
