import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { problem, sendProblem } from './problem.ts';

/**
 * A token bucket per principal: `burst` requests at once, refilled at `perSecond`. A token
 * bucket lets a client burst after idling, while a steady rate above the limit is throttled.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one token; returns 0 when allowed, else the whole seconds to wait. */
  take(principal: string): number {
    const now = this.now();
    const bucket = this.buckets.get(principal) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(principal, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
  }
}

export const rateLimitPlugin = fp(async (app: FastifyInstance, opts: { perSecond: number; burst: number }) => {
  // A rate of 0 turns limiting off (a deployment that limits at its gateway).
  if (opts.perSecond <= 0) return;
  const buckets = new TokenBuckets(opts.perSecond, opts.burst);
  app.addHook('onRequest', async (request, reply) => {
    if (!request.principal) return;
    const wait = buckets.take(request.principal);
    if (wait > 0) {
      reply.header('Retry-After', String(wait));
      return sendProblem(
        reply,
        problem(429, 'rate_limited', `rate limit of ${opts.perSecond} requests per second (bursts of ${opts.burst}) exceeded; retry in ${wait} s`),
      );
    }
  });
});
