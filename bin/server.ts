/**
 * `npm start`: the service. Reads the configuration once and wires the HTTP API, Temporal (an
 * existing cluster, or the embedded dev server), the job store, the engine and, unless
 * RUN_WORKER=false, an in-process job worker. SIGINT or SIGTERM drains it (docs/operations.md, "Shutdown").
 */
import { JobService } from '../api/jobs/job-service.ts';
import { buildServer } from '../api/server.ts';
import { Engine } from '../engine/engine.ts';
import { MODEL_NAMES, modelEntry } from '../models/contract/model-registry.ts';
import { openBetaWorkspace } from './beta-workspace.ts';
import { importLegacyKeysAtStart, openCheckedJobStore } from './open-store.ts';
import { closeApi, handleShutdownSignals, orderShutdownOurselves, stopWorker } from './shutdown.ts';
import { cannotStart, loadConfigOrStop } from './start-up.ts';
import { connectTemporal, jobWorkerOptions } from './temporal.ts';

const config = loadConfigOrStop();
// Checked here, not per request: every request without `?model=` would be refused for a parameter it never sent.
if (!modelEntry(config.defaultModel))
  cannotStart(new Error(`DEFAULT_MODEL '${config.defaultModel}' is not a model of this server (${MODEL_NAMES.join(', ')})`));
// The worker's module is loaded only where this process runs one: it loads the Temporal SDK's
// worker, and that loads webpack, neither of which an API replica (RUN_WORKER=false) uses.
const workerModule = config.temporal.runWorker ? await import('../activities/job-worker.ts') : undefined;
if (workerModule) await orderShutdownOurselves();
const shutdown = handleShutdownSignals(config.shutdownGraceMs, (message) => console.error(message));
const store = await openCheckedJobStore(config.storage);
await importLegacyKeysAtStart(config.dataDir, store);
const engine = new Engine(config.engine);
const beta = await openBetaWorkspace(config).catch(cannotStart);
const temporal = await connectTemporal(config).catch(cannotStart);
const jobs = new JobService(temporal.client, store, engine, { taskQueue: config.temporal.taskQueue, ...config.jobs });
const app = await buildServer(config, { logger: true, engine, jobs, betaDb: beta.jobs.db }).catch(cannotStart);

// Embedded by default: this process also works on jobs. RUN_WORKER=false leaves that to `npm run worker`.
const worker = workerModule ? await workerModule.createJobWorker(jobWorkerOptions(config), engine, store, beta.jobs).catch(cannotStart) : undefined;
// Listening last, so an API that answers is whole; the worker polls only once it does, so a port in
// use or a host that does not resolve stops the start before it takes any chunk.
await app.listen({ port: config.port, host: config.host }).catch(cannotStart);
const working = worker?.run();

app.log.info(`jobs run on Temporal at ${config.temporal.target}${worker ? ' with an in-process worker' : ''}`);
// JOB_RETENTION: finished jobs older than it are deleted, checked at start and then every tenth of it (at most hourly).
const retentionMs = config.jobs.retentionMs;
if (retentionMs !== null) {
  const sweep = () =>
    jobs
      .removeFinishedBefore(Date.now() - retentionMs)
      .then((ids) => ids.length > 0 && app.log.info(`removed ${ids.length} finished job(s) older than JOB_RETENTION`))
      .catch((err: unknown) => app.log.warn({ err }, 'the JOB_RETENTION sweep failed; it runs again later'));
  setInterval(sweep, Math.min(retentionMs / 10, 3_600_000)).unref();
  void sweep();
}
if (!config.temporal.address && config.temporal.uiPort > 0) app.log.info(`Temporal's Web UI (the jobs' workflows): http://127.0.0.1:${config.temporal.uiPort}`);

shutdown.ready(async () => {
  // At once: the API stops accepting and finishes its requests while the worker stops polling
  // and finishes (or hands back) its chunks. Both still need Temporal, so it stops last.
  await Promise.all([closeApi(app, config.shutdownGraceMs), worker && working && stopWorker(worker, working)]);
  await engine.close();
  beta.close();
  store.close();
  await temporal.close();
});
