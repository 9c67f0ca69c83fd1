import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics (served at GET /metrics): one registry, and the metrics the
 * other parts record into. This part imports nothing of the project, so the engine, the
 * activities and the API can all record without importing each other.
 */

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route (the path pattern) and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by method, route and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: SECONDS,
  registers: [registry],
});

export const forecasts = new Counter({
  name: 'forecasts_total',
  help: 'Forecasts made (one per series and creation date or cutoff), by model and outcome (ok, refused, failed).',
  labelNames: ['model', 'outcome'] as const,
  registers: [registry],
});

export const modelBatchDuration = new Histogram({
  name: 'model_batch_duration_seconds',
  help: 'Time one batch of forecasts (a request, or a job chunk) takes on the model threads, queueing included, by model.',
  labelNames: ['model'] as const,
  buckets: SECONDS,
  registers: [registry],
});

export const modelFitDuration = new Histogram({
  name: 'model_fit_duration_seconds',
  help: "Time a model spends fitting and forecasting one series at one date in its thread, queueing excluded (a global model's batch shared out evenly), by model.",
  labelNames: ['model'] as const,
  buckets: [0.0001, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const jobChunkDuration = new Histogram({
  name: 'job_chunk_duration_seconds',
  help: "Time a job chunk takes in this process's worker (reading its input, forecasting, writing its results), by job kind.",
  labelNames: ['kind'] as const,
  buckets: SECONDS,
  registers: [registry],
});

/** Where the model-thread queue depth is read from: every open pool of model threads in the process. */
const queueSources = new Set<() => number>();

new Gauge({
  name: 'model_thread_queue_depth',
  help: 'Batches of forecasts waiting for a model thread.',
  registers: [registry],
  collect() {
    let depth = 0;
    for (const read of queueSources) depth += read();
    this.set(depth);
  },
});

/** Where job counts come from: the API's job services that run with Temporal (one per server). */
const jobCounts = new Set<() => Promise<Record<string, number>>>();

new Gauge({
  name: 'jobs',
  help: "Jobs by the state of their workflow (running, completed, failed, canceled, terminated, timed_out), every caller's, from Temporal; absent while Temporal does not answer.",
  labelNames: ['status'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const totals = new Map<string, number>();
    for (const read of jobCounts) {
      try {
        for (const [status, count] of Object.entries(await withinSeconds(read(), 2))) totals.set(status, (totals.get(status) ?? 0) + count);
      } catch {
        // Temporal unreachable: /readyz says so; the scrape still answers with everything else.
      }
    }
    for (const [status, count] of totals) this.set({ status }, count);
  },
});

/** The work's result, or a rejection once `seconds` have passed: a scrape never waits on a hung dependency. */
function withinSeconds<T>(work: Promise<T>, seconds: number): Promise<T> {
  return Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), seconds * 1000).unref())]);
}

/** Reports jobs by status from `read` until the returned function is called. */
export function watchJobs(read: () => Promise<Record<string, number>>): () => void {
  jobCounts.add(read);
  return () => jobCounts.delete(read);
}

/** Counts a pool's waiting batches into model_thread_queue_depth until the returned function is called. */
export function watchQueueDepth(read: () => number): () => void {
  queueSources.add(read);
  return () => queueSources.delete(read);
}
