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

/** Client addresses remembered at most; beyond it the longest-quiet one is forgotten, so a flood of addresses cannot grow memory. */
const MAX_ADDRESSES = 100_000;

/**
 * Failed authentications per client address in a sliding window: at most `limit` within
 * `windowMs`. An address at its limit waits until its oldest failure leaves the window.
 */
export class FailureWindows {
  /** Each address's failure times, oldest first (at most `limit`); insertion order is recency. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** 0 when the address may try, else the whole seconds until it may. */
  blockedFor(address: string): number {
    const times = this.recent(address);
    if (times.length < this.limit) return 0;
    return Math.max(1, Math.ceil((times[0] + this.windowMs - this.now()) / 1000));
  }

  record(address: string): void {
    const times = this.recent(address);
    times.push(this.now());
    if (times.length > this.limit) times.shift();
    this.failures.delete(address);
    this.failures.set(address, times);
    if (this.failures.size > MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
  }

  private recent(address: string): number[] {
    const since = this.now() - this.windowMs;
    const times = (this.failures.get(address) ?? []).filter((t) => t > since);
    if (times.length === 0) this.failures.delete(address);
    return times;
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
      const detail = `rate limit of ${opts.perSecond} requests per second (bursts of ${opts.burst}) exceeded; retry in ${wait} s`;
      return sendProblem(reply, problem(429, 'rate_limited', detail, null, { name: 'requests_per_second', value: opts.perSecond }), wait);
    }
  });
});
