import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';
import { fieldPath, ForecastFailedError, RequestError, type FieldError } from '../engine/errors.ts';
import { problem, sendProblem, type ProblemDetails } from './problem.ts';

/** Validates `value` with a zod schema; failures become one FieldError per failing path. */
export function parseOr422<S extends z.ZodType>(schema: S, value: unknown, root: 'body' | 'query' | 'path'): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const byPath = new Map<string, string[]>();
  for (const issue of result.error.issues) {
    const at = fieldPath(root, issue.path);
    byPath.set(at, [...(byPath.get(at) ?? []), issue.message]);
  }
  const errors: FieldError[] = [...byPath].map(([path, messages]) => ({ path, message: [...new Set(messages)].join('; ') }));
  throw new RequestError(
    422,
    'invalid_request',
    `the ${root === 'body' ? 'request body' : root === 'query' ? 'query' : 'path'} failed validation (${errors.length} field${errors.length === 1 ? '' : 's'})`,
    errors,
  );
}

/** Fastify's own refusals (before our handlers run), mapped to problem+json. */
function fromFastifyError(error: FastifyError): ProblemDetails | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem(415, 'unsupported_media_type', 'send the request body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem(400, 'invalid_json', 'the request body is empty; send a JSON document');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return problem(400, 'invalid_json', `the request body is not valid JSON: ${error.message}`);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem(413, 'payload_too_large', error.message);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem(400, 'bad_request', error.message);
  }
  if (error instanceof SyntaxError && error.statusCode === 400) return problem(400, 'invalid_json', `the request body is not valid JSON: ${error.message}`);
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return problem(error.statusCode, 'bad_request', error.message);
  return null;
}

/** Every non-2xx answer is application/problem+json (reference 2.7, section 7); no stack leaks. */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof RequestError) return sendProblem(reply, problem(error.status, error.code, error.message, error.errors));
    if (error instanceof ForecastFailedError) {
      request.log.error({ err: error }, 'forecast failed');
      return sendProblem(reply, problem(500, 'forecast_failed', error.message));
    }
    const mapped = fromFastifyError(error);
    if (mapped) return sendProblem(reply, mapped);
    request.log.error({ err: error }, 'unexpected error');
    return sendProblem(reply, problem(500, 'internal_error', 'an unexpected error occurred; it has been logged'));
  });
  app.setNotFoundHandler((request, reply) => sendProblem(reply, problem(404, 'not_found', `no route ${request.method} ${request.url.split('?')[0]}`)));
});
