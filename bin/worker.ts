/**
 * `npm run worker`: one more worker process for forecast jobs, on this machine or another. It
 * needs the Temporal address and the job store the API uses (docs/operations.md, "Jobs, workers and scale-out"). SIGINT or
 * SIGTERM stops it polling; its running chunks finish within SHUTDOWN_GRACE or go back to Temporal,
 * which retries them on another worker (docs/operations.md, "Shutdown").
 */
import { createJobWorker } from '../activities/job-worker.ts';
import { Engine } from '../engine/engine.ts';
import { openBetaWorkspace } from './beta-workspace.ts';
import { openCheckedJobStore } from './open-store.ts';
import { handleShutdownSignals, orderShutdownOurselves, stopWorker } from './shutdown.ts';
import { cannotStart, loadConfigOrStop } from './start-up.ts';
import { checkTemporal, jobWorkerOptions } from './temporal.ts';
import { serveWorkerMetrics } from './worker-metrics.ts';

const config = loadConfigOrStop();
await orderShutdownOurselves();
const shutdown = handleShutdownSignals(config.shutdownGraceMs, (message) => console.error(message));
const store = await openCheckedJobStore(config.storage);
const engine = new Engine(config.engine);
const beta = await openBetaWorkspace(config).catch(cannotStart);
// The SDK's own connection errors do not say which setting is wrong; this check's do.
await checkTemporal(config.temporal).catch(cannotStart);
const worker = await createJobWorker(jobWorkerOptions(config), engine, store, beta.jobs).catch(cannotStart);
const running = worker.run();
const metricsPort = config.temporal.workerMetricsPort;
const metrics =
  metricsPort > 0
    ? await serveWorkerMetrics(metricsPort, config.host).catch((error: Error) => {
        console.error(`Cannot serve the worker's metrics on port ${metricsPort} (WORKER_METRICS_PORT): ${error.message}`);
        process.exit(1);
      })
    : undefined;
if (metrics) console.error(`worker metrics: http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${metricsPort}/metrics`);
shutdown.ready(async () => {
  metrics?.close();
  await stopWorker(worker, running);
  await engine.close();
  beta.close();
  store.close();
});
// Returns once a signal has stopped it (the drain then exits); a fatal worker error rejects here and ends the process with it.
await running;
