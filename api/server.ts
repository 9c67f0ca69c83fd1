import Fastify, { type FastifyInstance } from 'fastify';
import { authPlugin, KeyResolver } from './auth.ts';
import type { Config } from './config.ts';
import { errorsPlugin } from './errors-plugin.ts';
import type { JobService } from './jobs/job-service.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { rateLimitPlugin } from './rate-limit.ts';
import { betaRoutes } from './routes/beta.ts';
import { forecastRoutes } from './routes/forecast.ts';
import { jobRoutes } from './routes/jobs.ts';
import { warmupRoutes } from './routes/warmup.ts';

/** The HTTP service: each concern a plugin, each route its schema. */
/** `jobs` is absent only where no Temporal service is wanted (tests of the synchronous API). */
export async function buildServer(config: Config, options: { logger?: boolean; keyResolver?: KeyResolver; jobs?: JobService } = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: config.maxBodyBytes });
  // JSON only: a text/plain body is refused with 415 instead of failing validation as a string.
  app.removeContentTypeParser('text/plain');
  await app.register(errorsPlugin);
  await app.register(authPlugin, { resolver: options.keyResolver ?? new KeyResolver(config) });
  await app.register(rateLimitPlugin, config.rateLimit);

  const openapi = buildOpenApiDocument(config.defaultModel);
  app.get('/openapi', { config: { public: true } }, async () => openapi);
  await app.register(forecastRoutes, { defaultModel: config.defaultModel });
  await app.register(warmupRoutes, { defaultModel: config.defaultModel });
  await app.register(betaRoutes, {
    dataDir: config.dataDir,
    maxUploadBytes: config.beta.maxUploadBytes,
    locator: config.beta,
    duckdbMemoryLimit: config.beta.duckdbMemoryLimit,
    duckdbInitSql: config.beta.duckdbInitSql,
  });
  if (options.jobs) await app.register(jobRoutes, { defaultModel: config.defaultModel, dataDir: config.dataDir, jobs: options.jobs });
  return app;
}
