/**
 * The answers many operations share, as the OpenAPI document states them: problem+json errors,
 * refusals with `Retry-After`, a draining server's 503, Parquet downloads. Route modules build
 * their operations from these, so every route states the same error the same way.
 */
import type { ZodOpenApiResponseObject } from 'zod-openapi';
import { ProblemDetails } from '../problem.ts';

export const problemResponse = (description: string): ZodOpenApiResponseObject => ({
  description,
  content: { 'application/problem+json': { schema: ProblemDetails } },
});

const RETRY_AFTER = {
  'Retry-After': { description: 'Seconds to wait before retrying: a whole number, at least 1.', schema: { type: 'integer', minimum: 1 } },
} as const;
/** A refusal the client may retry later, with the Retry-After header. */
export const retryLaterResponse = (description: string): ZodOpenApiResponseObject => ({ ...problemResponse(description), headers: RETRY_AFTER });

/** Any request that reaches a server draining after SIGTERM (docs/operations.md, "Shutdown"). */
export const SHUTTING_DOWN =
  'this server is shutting down (`shutting_down`, with `Retry-After` and `Connection: close`): retry, on another instance or on this one once restarted';
export const shuttingDown = { '503': retryLaterResponse(`Refused: ${SHUTTING_DOWN}.`) };

/**
 * Every job operation reads or writes the job store, and most ask Temporal about the job. Spread
 * after ERRORS, whose 503 says only that the server is shutting down.
 */
export const dependencyErrors = {
  '503': retryLaterResponse(
    `The job store (STORAGE_URL) cannot be reached right now (\`storage_unavailable\`; retry later), or the job scheduler (Temporal) cannot (\`scheduler_unavailable\`, with \`Retry-After\`; nothing was started or changed), or ${SHUTTING_DOWN}.`,
  ),
};

export const jobErrors = {
  '403': problemResponse('The job belongs to another principal (`forbidden`).'),
  '404': problemResponse('No such job (`not_found`).'),
  ...dependencyErrors,
};

export const overQuota = (quotas: string) =>
  `or more than the caller's quota allows (\`quota_exceeded\`: ${quotas}; the problem's \`limit\` member names the quota and its value, \`errors\` the field)`;
export const JSON_BODY_MALFORMED =
  'The body is empty or not valid JSON, or has a property named `__proto__` (`invalid_json`), or its length header is wrong (`bad_request`)';
export const MULTIPART_MALFORMED = 'The multipart body or the query part is malformed (`bad_request`, `invalid_json`)';

/** What an operation with a JSON body answers besides ERRORS. */
export const BODY_ERRORS = {
  '400': problemResponse(`${JSON_BODY_MALFORMED}.`),
  '413': problemResponse(`The body is larger than MAX_BODY_BYTES (\`payload_too_large\`), ${overQuota('`upload_bytes`, `series_per_request`')}.`),
  '415': problemResponse('The body is not sent as application/json (`unsupported_media_type`).'),
};

/** What an operation that takes no body answers to a long one (api/bodyless-routes.ts): it ignores any other. */
export const IGNORED_BODY_ERROR = {
  '413': problemResponse('A body was sent, longer than 64 KiB (`payload_too_large`): this operation reads none, and ignores a shorter one.'),
};

/** What every operation that needs an API key may answer. */
export const ERRORS = {
  '401': {
    ...problemResponse('Missing or invalid API key (`invalid_auth`).'),
    headers: { 'WWW-Authenticate': { description: 'The scheme to authenticate with: `Bearer`.', schema: { type: 'string', const: 'Bearer' } } } as const,
  },
  '422': problemResponse('The body or a parameter failed validation (`invalid_request`), or the model cannot run here (`model_unavailable`).'),
  '429': retryLaterResponse(
    "Rate limit exceeded (`rate_limited`), or too many failed authentications from the client's address (`too_many_failed_authentications`, answered before the key is checked); the `Retry-After` header gives the seconds to wait, the `limit` member the limit.",
  ),
  '500': problemResponse('Unexpected server-side failure (`forecast_failed`, `internal_error`).'),
  ...shuttingDown,
};

export const jsonResponse = (description: string, schema: unknown): ZodOpenApiResponseObject =>
  ({ description, content: { 'application/json': { schema } } }) as ZodOpenApiResponseObject;

export const parquetResponse = (description: string): ZodOpenApiResponseObject => ({
  description,
  headers: {
    'Content-Disposition': { description: 'An attachment, named `<job_id>-<table>.parquet`.', schema: { type: 'string' } },
  } as const,
  content: { 'application/vnd.apache.parquet': { schema: { type: 'string', contentMediaType: 'application/vnd.apache.parquet' } } },
});
