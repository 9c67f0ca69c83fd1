import { createJobWorker } from '../activities/worker.ts';
import { closeWorkerPool } from '../engine/worker-pool.ts';
import { loadConfig } from './config.ts';
import { JobService } from './jobs/job-service.ts';
import { buildServer } from './server.ts';
import { connectTemporal } from './temporal/connect.ts';

const config = loadConfig();
const temporal = await connectTemporal(config);
const jobs = new JobService(temporal.client, { dataDir: config.dataDir, taskQueue: config.temporal.taskQueue, ...config.jobs });
const app = await buildServer(config, { logger: true, jobs });

// Embedded by default: this process also works on jobs. RUN_WORKER=false leaves that to `npm run worker`.
const worker = config.temporal.runWorker
  ? await createJobWorker({
      address: temporal.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      dataDir: config.dataDir,
      forecastsPerChunk: config.jobs.forecastsPerChunk,
    })
  : undefined;
const working = worker?.run();

await app.listen({ port: config.port, host: config.host });
app.log.info(`jobs run on Temporal at ${temporal.address}${worker ? ' with an in-process worker' : ''}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    app.log.info(`${signal}: shutting down`);
    try {
      await app.close();
      // The Temporal SDK reacts to the same signals by draining its workers itself.
      if (worker?.getState() === 'RUNNING') worker.shutdown();
      await working;
      await closeWorkerPool();
    } finally {
      await temporal.close();
      process.exit(0);
    }
  });
}
