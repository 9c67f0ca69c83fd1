import type { DuckDBInstance } from '@duckdb/node-api';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { openProcessBetaDatabase } from '../../engine/beta/beta-database.ts';
import type { LocatorConfig } from '../../engine/beta/locator.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../../engine/beta/resolved-query.ts';
import { BetaResponse } from '../../engine/beta/response.ts';
import { checkBetaQueryAgainstModel, runBetaForecast } from '../../engine/beta/run.ts';
import type { Engine } from '../../engine/engine.ts';
import { requireRunnableModel } from '../../engine/model-checks.ts';
import { resolveSources } from '../beta/upload-sources.ts';
import { betaJobRoutes, type CheckedUpload } from './beta-jobs.ts';
import type { JobService } from '../jobs/job-service.ts';
import { newUploadDir, receiveUpload, removeStaleUploads, removeUpload } from '../beta/upload.ts';
import { BETA_ROOTS, HttpError } from '../problem.ts';
import type { IdempotentSubmissions } from '../idempotent-submissions.ts';
import { tighterUploadLimit, uploadExceeded, type QuotaPolicy } from '../quotas.ts';
import { betaBody, betaUploadErrors } from '../schemas/beta-upload.ts';
import { BetaModelQuery, type betaModelQuery } from '../schemas/query.ts';
import { ERRORS, jsonResponse, retryLaterResponse, SHUTTING_DOWN } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';

export interface BetaRouteOptions {
  dataDir: string;
  maxUploadBytes: number;
  locator: LocatorConfig;
  duckdbMemoryLimit: string | null;
  duckdbInitSql: string | null;
  engine: Engine;
  /** The process's beta database, shared with its job worker; without one the routes open their own. */
  db?: DuckDBInstance;
  /** Beta jobs (POST /v1-beta/forecast-jobs...), where the server has a Temporal service. */
  jobs?: JobService;
  /** Per-principal quotas (upload bytes here; concurrent jobs for beta jobs). */
  quotas: QuotaPolicy;
  /** Idempotency-Key handling of beta job submissions, where the server has jobs. */
  submissions?: IdempotentSubmissions;
}

const NOT_MULTIPART =
  'send multipart/form-data: a part named "query" (application/json) holding the beta request, and one part per data file (Parquet or Arrow IPC)';

/**
 * POST /v1-beta/forecast (reference 4.6) and beta jobs: an encapsulated plugin, so its multipart
 * parser and its own content-type rules apply to these routes only.
 */
export async function betaRoutes(app: FastifyInstance, opts: BetaRouteOptions): Promise<void> {
  // Any body reaches the handler unparsed, which answers a clear 415 unless it is multipart.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));
  await app.register(multipart);

  // DATA_DIR may be shared by several processes (docs/operations.md, "Jobs, workers and scale-out"): only clearly abandoned
  // uploads are swept at start-up.
  await removeStaleUploads(opts.dataDir);
  let db = opts.db;
  if (!db) {
    const own = await openProcessBetaDatabase(opts.dataDir, { memoryLimit: opts.duckdbMemoryLimit, initSql: opts.duckdbInitSql });
    app.addHook('onClose', async () => own.close());
    db = own.db;
  }

  const checked = (request: FastifyRequest, dir: string) => receiveCheckedUpload(request, dir, opts);

  app.post('/v1-beta/forecast', { config: { fieldRoots: BETA_ROOTS } }, async (request, reply) => {
    const dir = newUploadDir(opts.dataDir);
    try {
      const started = performance.now();
      const { model, query, sources } = await checked(request, dir);
      const uploadMs = performance.now() - started;
      const { body, timings } = await runBetaForecast(opts.engine, db, query, model, sources);
      // Where the time went, for clients and the benchmark (parsing and schema logic vs model).
      reply.header(
        'server-timing',
        `upload;dur=${uploadMs.toFixed(1)}, schema;dur=${timings.schemaMs.toFixed(1)}, model;dur=${timings.modelMs.toFixed(1)}, assemble;dur=${timings.assembleMs.toFixed(1)}`,
      );
      return body;
    } finally {
      await removeUpload(dir);
    }
  });

  if (opts.jobs && opts.submissions)
    betaJobRoutes(app, { jobs: opts.jobs, db, dataDir: opts.dataDir, receive: checked, quotas: opts.quotas, submissions: opts.submissions });
}

/**
 * The multipart body of a beta call, received and checked as far as is cheap: the model, the
 * query, its parts (streamed to `dir`) matched with its sources. Shared by the synchronous
 * endpoint and beta jobs, so both refuse the same input the same way.
 */
async function receiveCheckedUpload(request: FastifyRequest, dir: string, opts: BetaRouteOptions): Promise<CheckedUpload> {
  const { model: modelName } = parseOr422(BetaModelQuery, request.query, 'query');
  requireRunnableModel(modelName, opts.engine.settings.models);
  if (!request.isMultipart()) throw new HttpError(415, 'unsupported_media_type', NOT_MULTIPART);
  // A principal's upload_bytes quota, where tighter than BETA_MAX_UPLOAD_BYTES, applies to the same bytes.
  const quota = tighterUploadLimit(opts.quotas.of(request.principal), opts.maxUploadBytes);
  const upload = await receiveUpload(
    request,
    quota === null ? { dir, maxBytes: opts.maxUploadBytes } : { dir, maxBytes: quota, refuse: () => uploadExceeded(quota) },
  );
  if (upload.query === undefined)
    throw new HttpError(422, 'invalid_request', `no "query" part: ${NOT_MULTIPART}`, [{ path: 'body.query', message: 'required' }]);
  const query = resolveBetaQuery(parseOr422(BetaQuery, upload.query, 'body.query'));
  const model = checkBetaQueryAgainstModel(query, modelName, opts.engine.settings.models);
  const sources = await resolveSources(query.parsed, upload, opts.locator);
  return { model, query, upload, sources };
}

export function betaPaths(query: ReturnType<typeof betaModelQuery>): ZodOpenApiPathsObject {
  return {
    '/v1-beta/forecast': {
      post: {
        operationId: 'betaForecast',
        summary: 'Forecast uploaded Parquet or Arrow data described by a schema (beta): roll-ups, cutoffs (backtests) and metrics.',
        requestParams: { query },
        requestBody: betaBody(),
        responses: {
          '200': jsonResponse(
            'Forecasts, one row per (series, cutoff, step). The Server-Timing header splits upload, schema logic, model and assembly time.',
            BetaResponse,
          ),
          ...betaUploadErrors,
          ...ERRORS,
          '503': retryLaterResponse(
            `The schema logic needs more memory than BETA_DUCKDB_MEMORY_LIMIT allows, even spilling to disk (\`insufficient_memory\`), an object store a locator names cannot be reached (\`object_store_unavailable\`), or ${SHUTTING_DOWN}.`,
          ),
        },
      },
    },
  };
}
