/** `npm run worker`: one more worker process for forecast jobs, on this machine or another. */
import { loadConfig } from '../api/config.ts';
import { closeWorkerPool } from '../engine/worker-pool.ts';
import { createJobWorker } from './worker.ts';

const config = loadConfig();
const worker = await createJobWorker({
  address: config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  dataDir: config.dataDir,
  forecastsPerChunk: config.jobs.forecastsPerChunk,
});
// The Temporal SDK drains the worker on SIGINT and SIGTERM by itself; run() returns after.
await worker.run();
await closeWorkerPool();
