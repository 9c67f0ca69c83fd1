import type { DuckDBInstance } from '@duckdb/node-api';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { Engine } from '../engine/engine.ts';
import { authPlugin, KeyResolver, type KeySource } from './auth.ts';
import { drainingPlugin } from './draining.ts';
import { clientErrorHandler, errorsPlugin, frameworkErrors } from './errors-plugin.ts';
import { IdempotentSubmissions } from './idempotent-submissions.ts';
import type { JobService } from './jobs/job-service.ts';
import { currentOpenApiDocument } from './openapi.ts';
import { QuotaPolicy, uploadQuotaPlugin } from './quotas.ts';
import { rateLimitPlugin } from './rate-limit.ts';
import { betaRoutes } from './routes/beta.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { forecastRoutes } from './routes/forecast.ts';
import { operationsRoutes } from './routes/operations.ts';
import { jobRoutes } from './routes/jobs.ts';
import { modelRoutes } from './routes/models.ts';
import { scheduleRoutes } from './routes/schedules.ts';
import { warmupRoutes } from './routes/warmup.ts';

export interface ServerParts {
  logger?: boolean;
  keyResolver?: KeyResolver;
  /** The engine requests run on; without one the server makes its own from the configuration and closes it with itself. */
  engine?: Engine;
  /** The process's beta database, shared with its job worker; without one the beta routes open their own. */
  betaDb?: DuckDBInstance;
  /** Absent only where no Temporal service is wanted (tests of the synchronous API). */
  jobs?: JobService;
}

/**
 * The CLI-made keys live in the job store, shared by every replica. Without a job service (tests
 * of the synchronous API only) there is no store, and no keys beyond FORECAST_API_KEYS: those tests
 * use them, or pass a resolver of their own, so that no test server reads a store in the background.
 */
const keySource = (parts: ServerParts): KeySource | null => parts.jobs?.store.apiKeys ?? null;

/** The HTTP service: each concern a plugin, each route its schema. */
export async function buildServer(config: Config, parts: ServerParts = {}): Promise<FastifyInstance> {
  // A number of hops, as Fastify takes it at run time (its types only know the function form).
  const hops = config.trustProxy;
  const trustProxy = typeof hops === 'number' ? (_address: string, hop: number) => hop < hops : hops;
  // Fastify's own 503 while closing is plain JSON; drainingPlugin answers problem+json instead.
  const app = Fastify({
    logger: parts.logger ?? false,
    bodyLimit: config.maxBodyBytes,
    return503OnClosing: false,
    trustProxy,
    // Fastify's and Node's own refusals, before any route runs, as problem+json like every other.
    frameworkErrors,
    clientErrorHandler,
  });
  const engine = parts.engine ?? new Engine(config.engine);
  if (!parts.engine) app.addHook('onClose', () => engine.close());
  // JSON only: a text/plain body is refused with 415 instead of failing validation as a string.
  app.removeContentTypeParser('text/plain');
  await app.register(errorsPlugin);
  // Before authentication: while closing, every request gets the same 503, whoever sends it.
  await app.register(drainingPlugin);
  await app.register(authPlugin, { resolver: parts.keyResolver ?? new KeyResolver(keySource(parts), config.envKeys), failures: config.authFailures });
  await app.register(rateLimitPlugin, config.rateLimit);
  const quotas = new QuotaPolicy(config.quotas);
  await app.register(uploadQuotaPlugin, { quotas, serverLimit: config.maxBodyBytes });
  // Idempotency-Key records live in the job store, so that they outlast this process and every API process shares them.
  const jobs = parts.jobs;
  const submissions = jobs && new IdempotentSubmissions(jobs.store.idempotency, async (id) => (await jobs.store.meta(id)) !== null, config.idempotencyKeyTtlMs);
  // First, so that its request counting sees every route.
  await app.register(operationsRoutes, { jobs: parts.jobs });

  const openapi = currentOpenApiDocument(config.defaultModel, config.engine.models);
  app.get('/openapi', { config: { public: true } }, async () => openapi());
  await app.register(forecastRoutes, { defaultModel: config.defaultModel, engine, quotas });
  await app.register(warmupRoutes, { defaultModel: config.defaultModel, engine });
  await app.register(modelRoutes, { engine });
  await app.register(betaRoutes, {
    dataDir: config.dataDir,
    maxUploadBytes: config.beta.maxUploadBytes,
    locator: config.beta,
    duckdbMemoryLimit: config.beta.duckdbMemoryLimit,
    duckdbInitSql: config.beta.duckdbInitSql,
    engine,
    db: parts.betaDb,
    jobs: parts.jobs,
    quotas,
    submissions,
  });
  if (jobs && submissions) await app.register(jobRoutes, { defaultModel: config.defaultModel, jobs, quotas, submissions });
  if (jobs) {
    const schedules = {
      jobs,
      quotas,
      settings: config.schedules,
      locator: config.beta,
      models: engine.settings.models,
      idempotencyKeyTtlMs: config.idempotencyKeyTtlMs,
    };
    await app.register(async (scoped) => scheduleRoutes(scoped, schedules));
  }
  // The dashboard at / (static files built from web/) and the job result views it reads.
  await app.register(dashboardRoutes, { dataDir: config.dataDir, jobs: parts.jobs });
  return app;
}
