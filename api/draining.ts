import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { problem, sendProblem } from './problem.ts';

/**
 * While the server closes (docs/operations.md, "Shutdown"): the listener is closed, so new connections are
 * refused, but a request can still arrive on a connection already open (kept alive, pipelined).
 * It is answered 503 `shutting_down`, as problem+json like every refusal (Fastify's own 503 is
 * not), with `Retry-After` (another instance, or this one restarted, will take it) and
 * `Connection: close`. Answers to requests already in flight close their connection too, so no
 * idle kept-alive connection holds the close up.
 */
export const drainingPlugin = fp(async (app: FastifyInstance) => {
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!draining) return;
    reply.header('retry-after', '1');
    return sendProblem(
      reply,
      problem(503, 'shutting_down', 'this server is shutting down and takes no new requests; retry (another instance or this one once restarted)'),
    );
  });
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('connection', 'close');
  });
});
