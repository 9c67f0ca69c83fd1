import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { httpDuration, httpRequests, registry, watchJobs } from '../../telemetry/metrics.ts';
import type { JobService } from '../jobs/job-service.ts';
import { HttpError } from '../problem.ts';

/**
 * What operators and their tools read: GET /healthz (the process answers), GET /readyz (Temporal
 * and the job store are reachable, so jobs can be served) and GET /metrics (Prometheus text
 * format, telemetry/metrics.ts). All three need no key, as probes and scrapers carry none; none
 * says anything about a caller's data. Every answered request is counted by route and status.
 */

export interface OperationsOptions {
  /** Absent where the server runs without Temporal (tests of the synchronous API): then nothing to check. */
  jobs?: JobService;
  /** How long /readyz waits for each dependency before calling it unreachable. */
  readyTimeoutMs?: number;
}

const withTimeout = <T>(work: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms).unref())]);

const plugin: FastifyPluginAsync<OperationsOptions> = async (app: FastifyInstance, options) => {
  app.addHook('onResponse', async (request, reply) => {
    // The route pattern, not the URL: job ids would make a series per job.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
  });

  if (options.jobs) {
    const jobs = options.jobs;
    const stop = watchJobs(() => jobs.countByStatus());
    app.addHook('onClose', async () => stop());
  }

  app.get('/healthz', { config: { public: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { public: true } }, async () => {
    if (options.jobs) {
      try {
        await withTimeout(options.jobs.ready(), options.readyTimeoutMs ?? 3000, 'a dependency');
      } catch (error) {
        throw new HttpError(503, 'not_ready', `not ready: ${(error as Error).message}`);
      }
    }
    return { status: 'ready', checks: options.jobs ? ['temporal', 'storage'] : [] };
  });

  app.get('/metrics', { config: { public: true } }, async (_request, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
};

export const operationsRoutes = fp(plugin, { name: 'operations' });
