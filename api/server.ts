import type { DuckDBInstance } from '@duckdb/node-api';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { Engine } from '../engine/engine.ts';
import { authPlugin, KeyResolver } from './auth.ts';
import { errorsPlugin } from './errors-plugin.ts';
import type { JobService } from './jobs/job-service.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { rateLimitPlugin } from './rate-limit.ts';
import { betaRoutes } from './routes/beta.ts';
import { forecastRoutes } from './routes/forecast.ts';
import { operationsRoutes } from './routes/operations.ts';
import { jobRoutes } from './routes/jobs.ts';
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

/** The HTTP service: each concern a plugin, each route its schema. */
export async function buildServer(config: Config, parts: ServerParts = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: parts.logger ?? false, bodyLimit: config.maxBodyBytes });
  const engine = parts.engine ?? new Engine(config.engine);
  if (!parts.engine) app.addHook('onClose', () => engine.close());
  // JSON only: a text/plain body is refused with 415 instead of failing validation as a string.
  app.removeContentTypeParser('text/plain');
  await app.register(errorsPlugin);
  await app.register(authPlugin, { resolver: parts.keyResolver ?? new KeyResolver(config) });
  await app.register(rateLimitPlugin, config.rateLimit);
  // First, so that its request counting sees every route.
  await app.register(operationsRoutes, { jobs: parts.jobs });

  const openapi = buildOpenApiDocument(config.defaultModel);
  app.get('/openapi', { config: { public: true } }, async () => openapi);
  await app.register(forecastRoutes, { defaultModel: config.defaultModel, engine });
  await app.register(warmupRoutes, { defaultModel: config.defaultModel, engine });
  await app.register(betaRoutes, {
    dataDir: config.dataDir,
    maxUploadBytes: config.beta.maxUploadBytes,
    locator: config.beta,
    duckdbMemoryLimit: config.beta.duckdbMemoryLimit,
    duckdbInitSql: config.beta.duckdbInitSql,
    engine,
    db: parts.betaDb,
    jobs: parts.jobs,
  });
  if (parts.jobs) await app.register(jobRoutes, { defaultModel: config.defaultModel, jobs: parts.jobs });
  return app;
}
