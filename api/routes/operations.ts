import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { httpDuration, httpRequests, registry, watchJobs } from '../../telemetry/prometheus-metrics.ts';
import type { JobService } from '../jobs/job-service.ts';
import { HttpError } from '../problem.ts';
import { jsonResponse, problemResponse, SHUTTING_DOWN, shuttingDown } from '../schemas/responses.ts';

/**
 * What operators and their tools read: GET /healthz (the process answers), GET /readyz (Temporal
 * and the job store are reachable, so jobs can be served) and GET /metrics (Prometheus text
 * format, telemetry/prometheus-metrics.ts). All three need no key, as probes and scrapers carry none; none
 * says anything about a caller's data. Every answered request is counted by route and status.
 */

export interface OperationsOptions {
  /** Absent where the server runs without Temporal (tests of the synchronous API): then nothing to check. */
  jobs?: JobService;
  /** How long /readyz waits for each dependency before calling it unreachable. */
  readyTimeoutMs?: number;
}

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

  app.get('/readyz', { config: { public: true } }, async (request) => {
    if (options.jobs) {
      const unready = await options.jobs.unready(options.readyTimeoutMs ?? 3000);
      if (unready.length > 0) {
        // Anyone may ask (no key): the answer names the dependencies, the log says why (addresses included).
        for (const { dependency, reason } of unready) request.log.warn({ dependency, reason }, 'not ready');
        throw new HttpError(503, 'not_ready', `not ready: ${unready.map((u) => u.dependency).join(' and ')} did not answer`);
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

const HealthResponse = z.object({ status: z.literal('ok') }).meta({ id: 'HealthResponse' });
const ReadyResponse = z.object({ status: z.literal('ready'), checks: z.array(z.enum(['temporal', 'storage'])) }).meta({ id: 'ReadyResponse' });

export function operationsPaths(): ZodOpenApiPathsObject {
  return {
    '/healthz': {
      get: {
        operationId: 'healthz',
        summary: 'Liveness: the process answers. No key needed.',
        security: [],
        responses: { '200': jsonResponse('Alive.', HealthResponse), ...shuttingDown },
      },
    },
    '/readyz': {
      get: {
        operationId: 'readyz',
        summary: 'Readiness: Temporal and the job store (STORAGE_URL) answer, so jobs can be served. No key needed.',
        security: [],
        responses: {
          '200': jsonResponse('Ready; `checks` lists what was checked.', ReadyResponse),
          '503': problemResponse(`A dependency is unreachable (\`not_ready\`; the detail names it), or ${SHUTTING_DOWN}.`),
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary:
          'Prometheus metrics, text format 0.0.4: http_requests_total and http_request_duration_seconds by method, route and status; forecasts_total by model and outcome; model_fit_duration_seconds (per forecast, in its thread) and model_batch_duration_seconds (per batch, queueing included) by model; model_thread_queue_depth; job_chunk_duration_seconds by job kind; jobs by workflow status; the process metrics of prom-client. No key needed.',
        security: [],
        responses: { '200': { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } }, ...shuttingDown },
      },
    },
  };
}
