import { NativeConnection, Worker } from '@temporalio/worker';
import { workerThreads } from '../engine/worker-pool.ts';
import { createActivities } from './forecast-job.ts';

export interface WorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  dataDir: string;
  forecastsPerChunk: number;
}

/**
 * A Temporal worker for forecast jobs: wiring only. Activities fit models on this process's
 * worker threads, so it takes about as many chunks at once as it has threads.
 */
export async function createJobWorker(options: WorkerOptions): Promise<Worker> {
  const connection = await NativeConnection.connect({ address: options.address });
  return Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: new URL('../workflows/forecast-job.ts', import.meta.url).pathname,
    activities: createActivities({ dataDir: options.dataDir, forecastsPerChunk: options.forecastsPerChunk }),
    // One chunk per model thread keeps every thread busy; more would only queue inside the pool.
    maxConcurrentActivityTaskExecutions: workerThreads() + 1,
  });
}
