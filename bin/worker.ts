/**
 * `npm run worker`: one more worker process for forecast jobs, on this machine or another. It
 * needs the Temporal address and the job store the API uses (README, scale-out).
 */
import { createJobWorker } from '../activities/worker.ts';
import { loadConfig } from '../config.ts';
import { Engine } from '../engine/engine.ts';
import { JobStore } from '../store/job-store.ts';

const config = loadConfig();
const engine = new Engine(config.engine);
const worker = await createJobWorker(
  {
    address: config.temporal.target,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    forecastsPerChunk: config.jobs.forecastsPerChunk,
  },
  engine,
  JobStore.local(config.dataDir),
);
// The Temporal SDK drains the worker on SIGINT and SIGTERM by itself; run() returns after.
await worker.run();
await engine.close();
