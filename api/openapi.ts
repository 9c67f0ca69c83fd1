import { createDocument } from 'zod-openapi';
import { z } from 'zod';
import { BetaQuery } from '../engine/beta/query-schema.ts';
import { BetaResponse } from '../engine/beta/response.ts';
import { ForecastRequest } from '../engine/request-schema.ts';
import { ForecastResponseSchema } from '../engine/response-schema.ts';
import { ProblemDetails } from './problem.ts';
import { BetaModelQuery, ModelQuery } from './query-schemas.ts';

import { BETA_JOBS, BetaJobStatus } from './routes/beta-jobs.ts';
import { JOB_PREFIXES, JobIdParams, JobListQuery, JobPageQuery, JobStatusResponse, JobSubmitted } from './routes/jobs.ts';
import { WarmupResponse } from './routes/warmup.ts';

const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemDetails } } });

/** Every job operation reads or writes the job store. */
const storeErrors = {
  '503': problemResponse('The job store (STORAGE_URL) cannot be reached right now (`storage_unavailable`); retry later.'),
};

const jobErrors = {
  '403': problemResponse('The job belongs to another principal (`forbidden`).'),
  '404': problemResponse('No such job (`not_found`).'),
  ...storeErrors,
};

/** What an operation with a JSON body answers besides ERRORS. */
const BODY_ERRORS = {
  '400': problemResponse('The body is empty or not valid JSON (`invalid_json`), or its length header is wrong (`bad_request`).'),
  '413': problemResponse('The body is larger than MAX_BODY_BYTES (`payload_too_large`).'),
  '415': problemResponse('The body is not sent as application/json (`unsupported_media_type`).'),
};

const ERRORS = {
  '401': problemResponse('Missing or invalid API key (`invalid_auth`).'),
  '422': problemResponse('The body or a parameter failed validation (`invalid_request`), or the model cannot run here (`model_unavailable`).'),
  '429': problemResponse('Rate limit exceeded (`rate_limited`); the `Retry-After` header gives the seconds to wait.'),
  '500': problemResponse('Unexpected server-side failure (`forecast_failed`, `internal_error`).'),
};

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function buildOpenApiDocument(defaultModel: string): ReturnType<typeof createDocument> {
  const query = ModelQuery(defaultModel);
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
      '/v1-beta/forecast': betaPath(),
      ...Object.fromEntries(betaJobPaths()),
      '/openapi': {
        get: {
          operationId: 'openapi',
          summary: 'This document.',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
      '/healthz': {
        get: {
          operationId: 'healthz',
          summary: 'Liveness: the process answers. No key needed.',
          security: [],
          responses: { '200': { description: 'Alive.', content: { 'application/json': { schema: HealthResponse } } } },
        },
      },
      '/readyz': {
        get: {
          operationId: 'readyz',
          summary: 'Readiness: Temporal and the job store (STORAGE_URL) answer, so jobs can be served. No key needed.',
          security: [],
          responses: {
            '200': { description: 'Ready; `checks` lists what was checked.', content: { 'application/json': { schema: ReadyResponse } } },
            '503': problemResponse('A dependency is unreachable (`not_ready`); the detail names it.'),
          },
        },
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          summary:
            'Prometheus metrics, text format 0.0.4: http_requests_total and http_request_duration_seconds by method, route and status; forecasts_total by model and outcome; model_fit_duration_seconds (per forecast, in its thread) and model_batch_duration_seconds (per batch, queueing included) by model; model_thread_queue_depth; job_chunk_duration_seconds by job kind; jobs by workflow status; the process metrics of prom-client. No key needed.',
          security: [],
          responses: { '200': { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } } },
        },
      },
    },
  });
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
          requestParams: { query },
          requestBody: { required: true, content: { 'application/json': { schema: ForecastRequest } } },
          responses: {
            '200': { description: 'The job was accepted.', content: { 'application/json': { schema: JobSubmitted } } },
            ...BODY_ERRORS,
            ...storeErrors,
            ...ERRORS,
          },
        },
        get: {
          operationId: `${id}ListJobs`,
          deprecated,
          summary: "The caller's jobs, newest first.",
          requestParams: { query: JobListQuery },
          responses: { '200': { description: 'Jobs.', content: { 'application/json': { schema: { type: 'object' } } } }, ...storeErrors, ...ERRORS },
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
  '400': problemResponse('The multipart body or the query part is malformed (`bad_request`, `invalid_json`).'),
  '413': problemResponse('The upload is larger than BETA_MAX_UPLOAD_BYTES (`payload_too_large`).'),
  '415': problemResponse('The body is not multipart/form-data (`unsupported_media_type`).'),
};

function betaPath() {
  return {
    post: {
      operationId: 'betaForecast',
      summary: 'Forecast uploaded Parquet or Arrow data described by a schema (beta): roll-ups, cutoffs (backtests) and metrics.',
      requestParams: { query: BetaModelQuery },
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
function betaJobPaths() {
  return [
    [
      BETA_JOBS,
      {
        post: {
          operationId: 'betaSubmitJob',
          summary: 'Submit a beta backtest as a job (same body as POST /v1-beta/forecast); results as Parquet.',
          requestParams: { query: BetaModelQuery },
          requestBody: betaBody(),
          responses: {
            '200': { description: 'The job was accepted.', content: { 'application/json': { schema: JobSubmitted } } },
            ...betaUploadErrors,
            ...storeErrors,
            ...ERRORS,
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
