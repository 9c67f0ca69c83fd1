import type { FastifyInstance } from 'fastify';

/** What an ignored body may hold: enough for any JSON a client sends by habit, little to read for nothing. */
const IGNORED_BODY_BYTES = 64 * 1024;

/**
 * Registers operations that take no body (cancel, delete, trigger) in a context of their own,
 * where any body is read and ignored. Clients that send `Content-Type: application/json` on every
 * call, with an empty body or `{}`, are then answered as if they had sent none: Fastify's JSON
 * parser would refuse the empty one as invalid JSON. A body over the limit is still a 413.
 */
export function withoutBodies(app: FastifyInstance, routes: (scope: FastifyInstance) => void): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: IGNORED_BODY_BYTES }, (_request, _body, done) => done(null, undefined));
    routes(scope);
  });
}
