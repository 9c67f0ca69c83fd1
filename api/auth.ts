import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { activeKeyHashes, hashKey } from './keys-store.ts';
import { problem, sendProblem } from './problem.ts';
import { FailureWindows } from './rate-limit.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the API key belongs to; jobs and rate limits are per principal. */
    principal: string;
  }
  interface FastifyContextConfig {
    /** Routes that need no API key (GET /openapi). */
    public?: boolean;
  }
}

/** How stale the view of CLI-managed keys may get: a revoked key stops working within this. */
const STORE_REFRESH_MS = 5_000;
/** An unknown key triggers a re-read at most this often, so a new key works at once. */
const MISS_REFRESH_MS = 1_000;

/**
 * Resolves bearer keys to principals: keys from FORECAST_API_KEYS, and keys created with the
 * CLI. The DuckDB file is opened briefly and read-only, never held, so the CLI can always write.
 */
export class KeyResolver {
  private readonly envKeys: Map<string, string>;
  private storeKeys = new Map<string, string>();
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly config: Pick<Config, 'dataDir' | 'envKeys'>,
    private readonly refresh = { staleMs: STORE_REFRESH_MS, missMs: MISS_REFRESH_MS },
  ) {
    this.envKeys = new Map(config.envKeys.map(({ principal, key }) => [hashKey(key), principal]));
  }

  async resolve(key: string): Promise<string | undefined> {
    const hash = hashKey(key);
    const fromEnv = this.envKeys.get(hash);
    if (fromEnv) return fromEnv;
    const age = Date.now() - this.loadedAt;
    if (age > this.refresh.staleMs || (!this.storeKeys.has(hash) && age > this.refresh.missMs)) await this.reload();
    return this.storeKeys.get(hash);
  }

  private reload(): Promise<void> {
    this.loading ??= activeKeyHashes(this.config.dataDir)
      .then((keys) => {
        this.storeKeys = keys;
        this.loadedAt = Date.now();
      })
      // The CLI may hold the file for a moment: keep the last good view and try again later.
      .catch(() => undefined)
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

export interface AuthOptions {
  resolver: KeyResolver;
  /** Failed authentications allowed per client address within a window (AUTH_FAILURE_LIMIT, AUTH_FAILURE_WINDOW); limit 0: no limit. */
  failures?: { limit: number; windowMs: number };
}

export const authPlugin = fp(async (app: FastifyInstance, opts: AuthOptions) => {
  const failures = opts.failures && opts.failures.limit > 0 ? new FailureWindows(opts.failures.limit, opts.failures.windowMs) : undefined;
  app.decorateRequest('principal', '');
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 || request.routeOptions.config.public) return;
    // Before the key is even looked at: an address guessing keys learns nothing more, valid or not.
    const wait = failures?.blockedFor(request.ip) ?? 0;
    if (wait > 0) {
      const detail = `too many failed authentications from this address (${failures!.limit} within ${failures!.windowMs / 1000} s); retry in ${wait} s`;
      return sendProblem(
        reply,
        problem(429, 'too_many_failed_authentications', detail, null, { name: 'failed_authentications', value: failures!.limit }),
        wait,
      );
    }
    const token = bearerToken(request);
    const principal = token ? await opts.resolver.resolve(token) : undefined;
    if (!principal) {
      // A request without credentials guesses nothing; a wrong or malformed one counts.
      if (request.headers.authorization !== undefined) failures?.record(request.ip);
      reply.header('WWW-Authenticate', 'Bearer');
      return sendProblem(reply, problem(401, 'invalid_auth', token ? 'the API key is not valid' : 'send an API key as "Authorization: Bearer <API_KEY>"'));
    }
    request.principal = principal;
  });
});
