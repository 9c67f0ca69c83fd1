import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { EngineError } from '../engine/errors.ts';
import { StoreUnavailableError } from '../store/errors.ts';
import { SCHEDULER_RETRY_AFTER_S, schedulerUnreachable } from './jobs/scheduler-errors.ts';
import { HttpError, httpFieldErrors, problem, sendProblem, STABLE_ROOTS, STATUS_OF_KIND, type FieldRoots, type ProblemDetails } from './problem.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Where the engine's inputs sit in this route's requests (default: the stable API's). */
    fieldRoots?: FieldRoots;
  }
}

/** Fastify's own refusals (before our handlers run), mapped to problem+json. */
function fromFastifyError(error: FastifyError): ProblemDetails | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem(415, 'unsupported_media_type', 'send the request body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem(400, 'invalid_json', 'the request body is empty; send a JSON document');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      // Fastify's parser says no more; it also refuses valid JSON with a __proto__ key, which could replace an object's prototype.
      return problem(
        400,
        'invalid_json',
        'the request body is not valid JSON, or it has a property named __proto__ (refused: it could change object prototypes)',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem(413, 'payload_too_large', error.message);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem(400, 'bad_request', error.message);
  }
  if (error instanceof SyntaxError && error.statusCode === 400) return problem(400, 'invalid_json', `the request body is not valid JSON: ${error.message}`);
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) return problem(error.statusCode, 'bad_request', error.message);
  return null;
}

/**
 * Fastify's router refusals, which come before any hook or handler (its `frameworkErrors`): a path
 * that is not valid percent-encoding, and a path parameter past the router's length. Every such
 * parameter names a resource (a job, a schedule), and none has so long a name: not found.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendProblem(reply, problem(404, 'not_found', 'no resource has so long a name'));
  return sendProblem(reply, problem(400, 'bad_request', 'the path is not valid percent-encoding (RFC 3986)'));
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (its `clientErrorHandler`):
 * headers past the size limit, malformed HTTP, a request that took too long to arrive. They
 * are answered as problem+json too, and the connection closed, as Node does.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
  const [status, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'the request headers exceed the server limit']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request did not arrive in time']
        : [400, 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify(problem(status, status === 400 ? 'bad_request' : status === 431 ? 'headers_too_large' : 'request_timeout', detail));
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * Every non-2xx answer is application/problem+json (reference 2.7, section 7); no stack leaks.
 * Engine errors are answered with their kind's status and their fields at the route's paths.
 */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  // Every route's path pattern and methods, so that a known path asked with another method is a
  // 405 naming the methods it has (the Allow header), not a 404.
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  app.addHook('onRoute', (route) => {
    // The path exactly as the router takes it: with a trailing slash no route matches, and the
    // answer is a 404 rather than a 405 whose Allow header lists the method just used.
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+')}$`);
    routes.push({ pattern, methods: [route.method].flat() });
  });
  const noRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods))].sort();
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendProblem(reply, problem(405, 'method_not_allowed', `${path} does not take ${request.method}; it takes ${allowed.join(', ')}`));
    }
    // A path may be long; the answer names its start.
    const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path;
    return sendProblem(reply, problem(404, 'not_found', `no route ${request.method} ${shown}`));
  };
  app.setNotFoundHandler(noRoute);
  // An operator's hint (a missing export's folder, a provider that cannot start) is logged once per
  // distinct hint, not on every refusal: clients may ask for the model again and again.
  const hintsLogged = new Set<string>();

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A request no route takes can still fail before the not-found handler runs: Fastify reads the
    // body of a method that has one (QUERY without a Content-Type is a 400). What the client
    // needs to hear is that the path does not take that method (405) or does not exist (404).
    if (request.is404) return noRoute(request, reply);
    if (error instanceof HttpError) {
      const { limit, retryAfterSeconds } = error.refusal;
      return sendProblem(reply, problem(error.status, error.code, error.message, error.errors, limit), retryAfterSeconds);
    }
    if (error instanceof EngineError) {
      if (error.kind === 'forecast_failed') request.log.error({ err: error }, 'forecast failed');
      if (error.operatorDetail && !hintsLogged.has(error.operatorDetail)) {
        hintsLogged.add(error.operatorDetail);
        request.log.warn({ code: error.kind }, error.operatorDetail);
      }
      const fields = error.fields && httpFieldErrors(error.fields, request.routeOptions.config.fieldRoots ?? STABLE_ROOTS);
      return sendProblem(reply, problem(STATUS_OF_KIND[error.kind], error.kind, error.message, fields));
    }
    if (error instanceof StoreUnavailableError) {
      // The store's address and its client's words go to the log; the caller learns what it can act on.
      request.log.warn({ err: error }, 'job store unavailable');
      return sendProblem(reply, problem(503, 'storage_unavailable', 'the job store cannot be reached right now; nothing stored was lost, try again shortly'));
    }
    const unreachable = schedulerUnreachable(error);
    if (unreachable) {
      request.log.warn({ err: error }, 'temporal unreachable');
      return sendProblem(reply, problem(503, 'scheduler_unavailable', unreachable), SCHEDULER_RETRY_AFTER_S);
    }
    const mapped = fromFastifyError(error);
    if (mapped) return sendProblem(reply, mapped);
    request.log.error({ err: error }, 'unexpected error');
    return sendProblem(reply, problem(500, 'internal_error', 'an unexpected error occurred; it has been logged'));
  });
});
