import { createDocument } from 'zod-openapi';
import { z } from 'zod';
import { BetaQuery } from '../engine/beta/query-schema.ts';
import { BetaResponse } from '../engine/beta/response.ts';
import { ForecastRequest } from '../engine/request-schema.ts';
import { ForecastResponseSchema } from '../engine/response-schema.ts';
import { availableModels, MODEL_NAMES } from '../models/registry.ts';
import type { ModelSettings } from '../models/types.ts';
import { dashboardPaths } from './dashboard/openapi-paths.ts';
import { ProblemDetails } from './problem.ts';
import { betaModelQuery, ModelQuery } from './query-schemas.ts';

import { BETA_JOBS, BetaJobStatus } from './routes/beta-jobs.ts';
import { JOB_PREFIXES, JobIdParams, JobListQuery, JobPageQuery, JobStatusResponse, JobSubmitted } from './routes/jobs.ts';
import { WarmupResponse } from './routes/warmup.ts';

const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemDetails } } });

/** Any request that reaches a server draining after SIGTERM (docs/operations.md, "Shutdown"). */
const SHUTTING_DOWN =
  'this server is shutting down (`shutting_down`, with `Retry-After` and `Connection: close`): retry, on another instance or on this one once restarted';
const shuttingDown = { '503': problemResponse(`Refused: ${SHUTTING_DOWN}.`) };

/** Every job operation reads or writes the job store, and most ask Temporal about the job. */
const dependencyErrors = {
  '503': problemResponse(
    `The job store (STORAGE_URL) cannot be reached right now (\`storage_unavailable\`; retry later), or the job scheduler (Temporal) cannot (\`scheduler_unavailable\`, with \`Retry-After\`; nothing was started or changed), or ${SHUTTING_DOWN}.`,
  ),
};

const jobErrors = {
  '403': problemResponse('The job belongs to another principal (`forbidden`).'),
  '404': problemResponse('No such job (`not_found`).'),
  ...dependencyErrors,
};

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying: a whole number, at least 1.', schema: { type: 'integer', minimum: 1 } },
} as const;
/** A refusal the client may retry later, with the Retry-After header. */
const retryLaterResponse = (description: string) => ({ ...problemResponse(description), headers: RETRY_AFTER });

const overQuota = (quotas: string) =>
  `or more than the caller's quota allows (\`quota_exceeded\`: ${quotas}; the problem's \`limit\` member names the quota and its value, \`errors\` the field)`;
const JSON_BODY_MALFORMED =
  'The body is empty or not valid JSON, or has a property named `__proto__` (`invalid_json`), or its length header is wrong (`bad_request`)';
const MULTIPART_MALFORMED = 'The multipart body or the query part is malformed (`bad_request`, `invalid_json`)';

/** What an operation with a JSON body answers besides ERRORS. */
const BODY_ERRORS = {
  '400': problemResponse(`${JSON_BODY_MALFORMED}.`),
  '413': problemResponse(`The body is larger than MAX_BODY_BYTES (\`payload_too_large\`), ${overQuota('`upload_bytes`, `series_per_request`')}.`),
  '415': problemResponse('The body is not sent as application/json (`unsupported_media_type`).'),
};

const ERRORS = {
  '401': problemResponse('Missing or invalid API key (`invalid_auth`).'),
  '422': problemResponse('The body or a parameter failed validation (`invalid_request`), or the model cannot run here (`model_unavailable`).'),
  '429': retryLaterResponse(
    "Rate limit exceeded (`rate_limited`), or too many failed authentications from the client's address (`too_many_failed_authentications`, answered before the key is checked); the `Retry-After` header gives the seconds to wait, the `limit` member the limit.",
  ),
  '500': problemResponse('Unexpected server-side failure (`forecast_failed`, `internal_error`).'),
  ...shuttingDown,
};

/** The Idempotency-Key request header of job submissions. */
const IdempotencyHeader = z.object({
  // The characters api/idempotency.ts accepts (visible ASCII but `"` and `\\`), bare or as a quoted string.
  'Idempotency-Key': z
    .string()
    .regex(/^(?:[\x21\x23-\x5b\x5d-\x7e]{1,255}|"[\x21\x23-\x5b\x5d-\x7e]{1,255}")$/)
    .optional()
    .meta({
      description:
        'Makes the submission idempotent: with the same key (per API key) and the same request, the service answers the same job instead of starting another, for IDEMPOTENCY_KEY_TTL (24 h by default); with another request, 422 `idempotency_key_reused`. 1-255 visible ASCII characters (a UUID, say), bare or as a quoted string.',
      example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    }),
});

/** What a job submission answers besides its body's errors and ERRORS. */
const submitErrors = (malformed: string) => ({
  '400': problemResponse(
    `${malformed}; or the Idempotency-Key header is malformed (\`invalid_idempotency_key\`, \`errors[].path\` \`header.Idempotency-Key\`).`,
  ),
  '409': retryLaterResponse(
    'A request with the same Idempotency-Key is still creating its job (`idempotency_key_in_use`); retry after `Retry-After` to get that job.',
  ),
  '422': problemResponse(
    'The body or a parameter failed validation (`invalid_request`), the model cannot run here (`model_unavailable`), or the Idempotency-Key was used for another request (`idempotency_key_reused`).',
  ),
  '429': retryLaterResponse(
    "The caller has as many jobs in progress as its `concurrent_jobs` quota allows (`quota_exceeded`, the `limit` member names it; nothing was started), so many of its submissions arrive at once that they cannot be counted in time (`too_many_submissions`), the rate limit is exceeded (`rate_limited`), or too many failed authentications came from the client's address (`too_many_failed_authentications`). `Retry-After` gives the seconds to wait.",
  ),
});

/** A job submission's answer; `Idempotent-Replayed: true` when an earlier request with the same key created the job. */
const submittedResponse = {
  description: 'The job was accepted (or, with an Idempotency-Key already used for the same request, the job that request created).',
  content: { 'application/json': { schema: JobSubmitted } },
  headers: {
    'Idempotent-Replayed': {
      description: '`true` when the job was created by an earlier request with the same Idempotency-Key.',
      schema: { type: 'string', enum: ['true'] },
    },
  },
};

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests.
 * `runnableModels`: the models this server runs now, the values `model` lists (api/query-schemas.ts).
 */
export function buildOpenApiDocument(defaultModel: string, runnableModels: readonly string[] = MODEL_NAMES): ReturnType<typeof createDocument> {
  const query = ModelQuery(defaultModel, runnableModels);
  const betaQuery = betaModelQuery(runnableModels);
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Forecasting Service API',
      version: '1.0.0',
      description: 'Time-series forecasting with statistical and foundation models behind one interface. Errors are RFC 9457 problem+json.',
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key as `Authorization: Bearer <API_KEY>`.' },
        apiKeyBearer: { type: 'http', scheme: 'bearer', description: 'The same API key; the reference declares two bearer schemes and either is accepted.' },
      },
    },
    security: [{ bearerAuth: [] }, { apiKeyBearer: [] }],
    paths: {
      '/forecast': {
        post: {
          operationId: 'forecast',
          summary: 'Forecast one or more series synchronously, from the latest date or from several forecast creation dates.',
          requestParams: { query },
          requestBody: { required: true, content: { 'application/json': { schema: ForecastRequest } } },
          responses: {
            '200': { description: 'Completed forecast.', content: { 'application/json': { schema: ForecastResponseSchema } } },
            ...BODY_ERRORS,
            ...ERRORS,
          },
        },
      },
      ...Object.fromEntries(JOB_PREFIXES.flatMap((prefix) => jobPaths(prefix, query))),
      '/warmup': {
        get: {
          operationId: 'warmup',
          summary: 'Load a model ahead of traffic.',
          requestParams: { query },
          responses: { '200': { description: 'The model is loaded.', content: { 'application/json': { schema: WarmupResponse } } }, ...ERRORS },
        },
      },
      '/v1-beta/forecast': betaPath(betaQuery),
      ...Object.fromEntries(betaJobPaths(betaQuery)),
      ...Object.fromEntries(dashboardPaths({ ...jobErrors, ...ERRORS }, problemResponse)),
      '/openapi': {
        get: {
          operationId: 'openapi',
          summary: 'This document.',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } }, ...shuttingDown },
        },
      },
      '/healthz': {
        get: {
          operationId: 'healthz',
          summary: 'Liveness: the process answers. No key needed.',
          security: [],
          responses: { '200': { description: 'Alive.', content: { 'application/json': { schema: HealthResponse } } }, ...shuttingDown },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readyz',
          summary: 'Readiness: Temporal and the job store (STORAGE_URL) answer, so jobs can be served. No key needed.',
          security: [],
          responses: {
            '200': { description: 'Ready; `checks` lists what was checked.', content: { 'application/json': { schema: ReadyResponse } } },
            '503': problemResponse(`A dependency is unreachable (\`not_ready\`; the detail names it), or ${SHUTTING_DOWN}.`),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary:
            'Prometheus metrics, text format 0.0.4: http_requests_total and http_request_duration_seconds by method, route and status; forecasts_total by model and outcome; model_fit_duration_seconds (per forecast, in its thread) and model_batch_duration_seconds (per batch, queueing included) by model; model_thread_queue_depth; job_chunk_duration_seconds by job kind; jobs by workflow status; the process metrics of prom-client. No key needed.',
          security: [],
          responses: { '200': { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } }, ...shuttingDown },
        },
      },
    },
  });
}

/**
 * GET /openapi's document for this server: rebuilt when the models it runs change (a foundation
 * model installed into MODELS_DIR while it runs), since the `model` parameter lists exactly those.
 */
export function currentOpenApiDocument(defaultModel: string, models: ModelSettings): () => ReturnType<typeof createDocument> {
  let built: { runnable: string; document: ReturnType<typeof createDocument> } | undefined;
  return () => {
    const runnable = availableModels(models);
    if (built?.runnable !== runnable.join()) built = { runnable: runnable.join(), document: buildOpenApiDocument(defaultModel, runnable) };
    return built.document;
  };
}

const HealthResponse = z.object({ status: z.literal('ok') }).meta({ id: 'HealthResponse' });
const ReadyResponse = z.object({ status: z.literal('ready'), checks: z.array(z.enum(['temporal', 'storage'])) }).meta({ id: 'ReadyResponse' });

const parquet = (what: string) => ({
  description: what,
  content: { 'application/vnd.apache.parquet': { schema: { type: 'string', contentMediaType: 'application/vnd.apache.parquet' } } },
});

/** Job endpoints under one prefix; the earlier variant's prefix is documented as deprecated. */
function jobPaths(prefix: (typeof JOB_PREFIXES)[number], query: ReturnType<typeof ModelQuery>) {
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
            ...dependencyErrors,
            ...ERRORS,
            ...submitErrors(JSON_BODY_MALFORMED),
          },
        },
        get: {
          operationId: `${id}ListJobs`,
          deprecated,
          summary: "The caller's jobs, newest first.",
          requestParams: { query: JobListQuery },
          responses: { '200': { description: 'Jobs.', content: { 'application/json': { schema: { type: 'object' } } } }, ...dependencyErrors, ...ERRORS },
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
          responses: { '200': { description: 'The job.', content: { 'application/json': { schema: JobStatusResponse } } }, ...jobErrors, ...ERRORS },
        },
        delete: deleteOperation(id, deprecated),
      },
    ],
    ...controlPaths(prefix, id, deprecated),
  ];
}

/** Deleting a job, the same for both kinds. */
function deleteOperation(id: string, deprecated: boolean) {
  return {
    operationId: `${id}DeleteJob`,
    deprecated,
    summary: 'Delete a job: cancels it if it runs, then removes its inputs and results. Afterwards the id is unknown (404).',
    requestParams: { path: JobIdParams },
    responses: {
      '200': { description: 'Deleted.', content: { 'application/json': { schema: JobDeleted } } },
      ...jobErrors,
      ...ERRORS,
    },
  };
}

const JobDeleted = z.object({ job_id: z.string(), status: z.literal('deleted') }).meta({ id: 'JobDeleted' });

/** Cancel and the Parquet downloads, the same for both kinds of job. */
function controlPaths(prefix: string, id: string, deprecated: boolean) {
  const path = { path: JobIdParams };
  return [
    [
      `${prefix}/{job_id}/cancel`,
      {
        post: {
          operationId: `${id}CancelJob`,
          deprecated,
          summary: 'Cancel a running job; it ends as failed with code cancelled.',
          requestParams: path,
          responses: {
            '200': { description: 'Cancellation requested.', content: { 'application/json': { schema: { type: 'object' } } } },
            '409': problemResponse('The job has already finished (`job_finished`).'),
            ...jobErrors,
            ...ERRORS,
          },
        },
      },
    ],
    ...(['predictions', 'metrics'] as const).map((table) => [
      `${prefix}/{job_id}/${table}.parquet`,
      {
        get: {
          operationId: `${id}Download${table[0].toUpperCase()}${table.slice(1)}`,
          deprecated,
          summary: `The completed job's ${table} as one Parquet file.`,
          requestParams: path,
          responses: {
            '200': parquet(`${table} (Parquet)`),
            '409': problemResponse('The job has not completed (`job_not_completed`).'),
            ...jobErrors,
            ...ERRORS,
          },
        },
      },
    ]),
  ];
}

/** POST /v1-beta/forecast: a multipart upload whose `query` part is the beta request. */
const betaBody = () => {
  const body = z.object({ query: BetaQuery }).catchall(
    z.string().meta({
      contentMediaType: 'application/octet-stream',
      description: 'A data part (Parquet or uncompressed Arrow IPC), named by the caller and read through inline://<part name>.',
    }),
  );
  return { required: true, content: { 'multipart/form-data': { schema: body, encoding: { query: { contentType: 'application/json' } } } } };
};

const betaUploadErrors = {
  '400': problemResponse(`${MULTIPART_MALFORMED}.`),
  '413': problemResponse(`The upload is larger than BETA_MAX_UPLOAD_BYTES (\`payload_too_large\`), ${overQuota('`upload_bytes`')}.`),
  '415': problemResponse('The body is not multipart/form-data (`unsupported_media_type`).'),
};

function betaPath(query: ReturnType<typeof betaModelQuery>) {
  return {
    post: {
      operationId: 'betaForecast',
      summary: 'Forecast uploaded Parquet or Arrow data described by a schema (beta): roll-ups, cutoffs (backtests) and metrics.',
      requestParams: { query },
      requestBody: betaBody(),
      responses: {
        '200': {
          description: 'Forecasts, one row per (series, cutoff, step). The Server-Timing header splits upload, schema logic, model and assembly time.',
          content: { 'application/json': { schema: BetaResponse } },
        },
        ...betaUploadErrors,
        ...ERRORS,
      },
    },
  };
}

/** Beta backtests as jobs: the synchronous body in, status, cancel and Parquet results out. */
function betaJobPaths(query: ReturnType<typeof betaModelQuery>) {
  return [
    [
      BETA_JOBS,
      {
        post: {
          operationId: 'betaSubmitJob',
          summary: 'Submit a beta backtest as a job (same body as POST /v1-beta/forecast); results as Parquet.',
          requestParams: { query, header: IdempotencyHeader },
          requestBody: betaBody(),
          responses: {
            '200': submittedResponse,
            ...betaUploadErrors,
            ...dependencyErrors,
            ...ERRORS,
            ...submitErrors(MULTIPART_MALFORMED),
          },
        },
      },
    ],
    [
      `${BETA_JOBS}/{job_id}`,
      {
        get: {
          operationId: 'betaGetJob',
          summary: 'Poll a beta job: in_progress (with progress), completed (with its download links) or failed (with error).',
          requestParams: { path: JobIdParams },
          responses: { '200': { description: 'The job.', content: { 'application/json': { schema: BetaJobStatus } } }, ...jobErrors, ...ERRORS },
        },
        delete: deleteOperation('beta', false),
      },
    ],
    ...controlPaths(BETA_JOBS, 'beta', false),
  ];
}
