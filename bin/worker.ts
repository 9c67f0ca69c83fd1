/**
 * `npm run worker`: one more worker process for forecast jobs, on this machine or another. It
 * needs the Temporal address and the job store the API uses (README, scale-out).
 */
import { createJobWorker } from '../activities/worker.ts';
import { loadConfig } from '../config.ts';
import { Engine } from '../engine/engine.ts';
import { openBetaWorkspace } from './beta-workspace.ts';
import { openCheckedJobStore } from './open-store.ts';

const config = loadConfig();
const store = await openCheckedJobStore(config.storage);
const engine = new Engine(config.engine);
const beta = await openBetaWorkspace(config);
const worker = await createJobWorker(
  {
    address: config.temporal.target,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    forecastsPerChunk: config.jobs.forecastsPerChunk,
  },
  engine,
  store,
  beta.jobs,
);
// The Temporal SDK drains the worker on SIGINT and SIGTERM by itself; run() returns after.
await worker.run();
await engine.close();
beta.close();
