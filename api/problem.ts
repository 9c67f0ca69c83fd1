import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { ErrorKind, FieldError, FieldPath, FieldRoot } from '../engine/errors.ts';

/** The limit a request ran into, as an extension member of its problem (RFC 9457, 3.2). */
export const ExceededLimit = z
  .object({
    name: z.string().meta({ description: 'concurrent_jobs, series_per_request, forecasts_per_job, upload_bytes, requests_per_second, failed_authentications' }),
    value: z.number().meta({ description: "The limit's value for this caller (a count, bytes, or requests per second)." }),
  })
  .meta({ id: 'ExceededLimit' });
export type ExceededLimit = z.output<typeof ExceededLimit>;

/** The error body of the reference (2.7, RFC 9457), served as application/problem+json. */
export const ProblemDetails = z
  .object({
    type: z.string().default('about:blank'),
    title: z.string(),
    status: z.int().min(400).max(599),
    code: z.string(),
    detail: z.string().nullable().default(null),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .nullable()
      .default(null),
    limit: ExceededLimit.optional().meta({ description: 'On refusals by a limit or quota (413, 429): which one, and its value for the caller.' }),
  })
  .meta({ id: 'ProblemDetails' });

export type ProblemDetails = z.output<typeof ProblemDetails>;
export type ProblemField = NonNullable<ProblemDetails['errors']>[number];

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The HTTP status of each kind of engine error: the one place engine errors meet HTTP. */
export const STATUS_OF_KIND: Record<ErrorKind, number> = {
  invalid_request: 422,
  model_unavailable: 422,
  forecast_failed: 500,
  insufficient_memory: 503,
  object_store_unavailable: 503,
};

/** Where each input of an engine call sits in an HTTP request, as the first part of an error's path. */
export type FieldRoots = Record<FieldRoot, string>;

/** POST /forecast, jobs, warm-up: the request is the JSON body, the model a query parameter. */
export const STABLE_ROOTS: FieldRoots = { request: 'body', model: 'query.model', upload: 'body' };

/** The beta: the request is the multipart body's `query` part; every uploaded part is a part of the body. */
export const BETA_ROOTS: FieldRoots = { request: 'body.query', model: 'query.model', upload: 'body' };

/** `body` + `['series', 0, 'target']` -> `body.series[0].target` (the reference's dotted form). */
export function fieldPath(root: string, path: FieldPath): string {
  let out = root;
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
  return out;
}

/** Engine field errors with their paths as the HTTP request has them. */
export function httpFieldErrors(fields: readonly FieldError[], roots: FieldRoots = STABLE_ROOTS): ProblemField[] {
  return fields.map((f) => ({ path: fieldPath(roots[f.root], f.path), message: f.message }));
}

/** A refusal of the HTTP layer itself (authentication, jobs, uploads, content types). */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: ProblemField[] | null = null,
    /** For refusals by a limit or quota: which one (the problem's `limit` member), and when to retry. */
    readonly refusal: { limit?: ExceededLimit; retryAfterSeconds?: number } = {},
  ) {
    super(message);
  }
}

export function problem(status: number, code: string, detail: string | null, errors: ProblemField[] | null = null, limit?: ExceededLimit): ProblemDetails {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, code, detail, errors, ...(limit && { limit }) };
}

/** Sends a problem; `retryAfterSeconds` becomes the Retry-After header (whole seconds, at least 1). */
export function sendProblem(reply: FastifyReply, body: ProblemDetails, retryAfterSeconds?: number): FastifyReply {
  if (retryAfterSeconds !== undefined) reply.header('Retry-After', String(Math.max(1, Math.ceil(retryAfterSeconds))));
  return reply.code(body.status).type('application/problem+json').send(body);
}
