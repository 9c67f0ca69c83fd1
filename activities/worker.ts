import { NativeConnection, Worker } from '@temporalio/worker';
import type { Engine } from '../engine/engine.ts';
import type { JobStore } from '../store/job-store.ts';
import { createActivities, type ActivityDependencies } from './forecast-job.ts';

export interface WorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  forecastsPerChunk: number;
}

/**
 * A Temporal worker for forecast jobs: wiring only. Activities fit models on the engine's model
 * threads, so it takes about as many chunks at once as there are threads.
 */
export async function createJobWorker(options: WorkerOptions, engine: Engine, store: JobStore, beta: ActivityDependencies['beta']): Promise<Worker> {
  const connection = await NativeConnection.connect({ address: options.address });
  return Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: new URL('../workflows/forecast-job.ts', import.meta.url).pathname,
    activities: createActivities({ engine, store, forecastsPerChunk: options.forecastsPerChunk, beta }),
    // One chunk per model thread keeps every thread busy; more would only queue inside the pool.
    maxConcurrentActivityTaskExecutions: engine.threads.size + 1,
  });
}
