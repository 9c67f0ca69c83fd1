import { NativeConnection, Worker, type NativeConnectionOptions } from '@temporalio/worker';
import type { Engine } from '../engine/engine.ts';
import type { JobStore } from '../store/job-store.ts';
import { createActivities, type ActivityDependencies } from './forecast-job.ts';

export interface WorkerOptions {
  address: string;
  /** TLS and a client certificate, or false for plaintext (docs/deployment.md, "A secured Temporal"). */
  tls?: NativeConnectionOptions['tls'];
  /** A Temporal Cloud API key, sent on every call. */
  apiKey?: string;
  namespace: string;
  taskQueue: string;
  forecastsPerChunk: number;
  /**
   * SHUTDOWN_GRACE: once asked to stop, how long running chunks may finish; then they are
   * cancelled and Temporal retries them on another worker. Unset: Temporal's 0 (at once).
   */
  shutdownGraceMs?: number;
}

/** How long past the grace a stopping worker may take before `run()` gives up on it (it then rejects). */
const FORCE_AFTER_GRACE_MS = 10_000;

/**
 * A Temporal worker for forecast jobs: wiring only. Activities fit models on the engine's model
 * threads, so it takes about as many chunks at once as there are threads.
 */
export async function createJobWorker(options: WorkerOptions, engine: Engine, store: JobStore, beta: ActivityDependencies['beta']): Promise<Worker> {
  const connection = await NativeConnection.connect({ address: options.address, tls: options.tls, ...(options.apiKey ? { apiKey: options.apiKey } : {}) });
  const graceMs = options.shutdownGraceMs ?? 0;
  return Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: new URL('../workflows/forecast-job.ts', import.meta.url).pathname,
    activities: createActivities({ engine, store, forecastsPerChunk: options.forecastsPerChunk, beta }),
    // One chunk per model thread keeps every thread busy; more would only queue inside the pool.
    maxConcurrentActivityTaskExecutions: engine.threads.size + 1,
    // After the grace the running chunks are cancelled; they give up at once (activities/forecast-job.ts),
    // so the force time only bounds a worker that hangs for some other reason.
    shutdownGraceTime: graceMs,
    shutdownForceTime: graceMs + FORCE_AFTER_GRACE_MS,
  });
}
