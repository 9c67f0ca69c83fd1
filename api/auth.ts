import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.ts';
import { hashKey, hasStoreKeyForm } from '../store/api-keys.ts';
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

/** Where CLI-made keys come from: the job store's (`store.apiKeys`), hash -> principal of the keys not revoked. */
export interface KeySource {
  activeHashes(): Promise<Map<string, string>>;
}

export interface KeyRefresh {
  /** How often the view of the store's keys is refreshed in the background. */
  intervalMs: number;
  /** A view older than this (background refreshes failing) is reloaded before a key is checked against it. */
  staleMs: number;
  /** Reloads a request may cause (an unknown key, a stale view) start at most this often. */
  requestMs: number;
}

/**
 * A revoked key stops working on every replica within 5 s: a refresh every 2 s, and a request
 * waits for a reload once the view is 5 s old. An unknown key makes a request wait for a reload
 * (at most one a second, shared by the requests waiting), so a new key works at once.
 */
export const KEY_REFRESH: KeyRefresh = { intervalMs: 2_000, staleMs: 5_000, requestMs: 1_000 };

/**
 * Resolves bearer keys to principals: keys from FORECAST_API_KEYS, and keys made with the key CLI,
 * which live in the job store and are shared by every API process (store/api-keys.ts). A reload
 * that fails keeps the last good view.
 */
export class KeyResolver {
  private readonly envKeys: Map<string, string>;
  private storeKeys = new Map<string, string>();
  /** When the current view's load started (what it shows was in the store then). */
  private loadedAt = 0;
  /** When a reload for requests last started, and the next one while requests wait for it. */
  private requestedAt = -Infinity;
  private requested: Promise<void> | undefined;
  private loading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private warn: (message: string) => void = () => undefined;

  constructor(
    /** The store's keys; null where there is no store (FORECAST_API_KEYS only). */
    private readonly source: KeySource | null,
    envKeys: Config['envKeys'],
    private readonly refresh: KeyRefresh = KEY_REFRESH,
  ) {
    this.envKeys = new Map(envKeys.map(({ principal, key }) => [hashKey(key), principal]));
  }

  /** Loads the keys now and every `intervalMs` until `stop()`; the timer does not keep the process alive. */
  start(warn: (message: string) => void): void {
    this.warn = warn;
    if (this.timer || !this.source) return;
    this.timer = setInterval(() => void this.load(), this.refresh.intervalMs).unref();
    void this.load();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async resolve(key: string): Promise<string | undefined> {
    const hash = hashKey(key);
    const fromEnv = this.envKeys.get(hash);
    if (fromEnv) return fromEnv;
    // A key of another form cannot be in the store: refused without a reload, so that clients
    // sending wrong keys of any kind cost the store nothing and wait for nothing.
    if (!this.source || !hasStoreKeyForm(key)) return undefined;
    const stale = Date.now() - this.loadedAt > this.refresh.staleMs;
    if (stale || !this.storeKeys.has(hash)) await this.reloadForRequests();
    return this.storeKeys.get(hash);
  }

  /**
   * A reload for requests (an unknown key, a stale view), started at most once per `requestMs`:
   * a request sooner than that waits for the next one, which every request waiting shares.
   */
  private reloadForRequests(): Promise<void> {
    this.requested ??= (async () => {
      const wait = this.requestedAt + this.refresh.requestMs - Date.now();
      // Awaited even when 0, so that what follows runs once `requested` holds this promise.
      await new Promise((resolve) => (wait > 0 ? setTimeout(resolve, wait) : resolve(undefined)));
      // Requests from now on may have keys this reload's listing misses: they wait for the next.
      this.requested = undefined;
      this.requestedAt = Date.now();
      // A load under way may have listed the keys before this request's key was made: after it, load again.
      await this.loading;
      await this.load();
    })();
    return this.requested;
  }

  private load(): Promise<void> {
    const startedAt = Date.now();
    this.loading ??= this.source!.activeHashes()
      .then(
        (keys) => {
          this.storeKeys = keys;
          this.loadedAt = startedAt;
          this.failing = false;
        },
        (error: unknown) => {
          // Once per outage: the last good view stays in use meanwhile.
          if (!this.failing) this.warn(`the API keys could not be read from the job store; the last keys read stay in use: ${(error as Error).message}`);
          this.failing = true;
        },
      )
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
  app.addHook('onReady', async () => opts.resolver.start((message) => app.log.warn(message)));
  app.addHook('onClose', async () => opts.resolver.stop());
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
