import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { FastifyInstance } from 'fastify';
import { createJobWorker } from '../../activities/job-worker.ts';
import { JobService } from '../../api/jobs/job-service.ts';
import { loadConfig, type Config } from '../../config.ts';
import { openProcessBetaDatabase } from '../../engine/beta/beta-database.ts';
import { Engine } from '../../engine/engine.ts';
import { JobStore } from '../../store/job-store.ts';
import { testServer } from '../api/helpers.ts';

/** How many times a dev server that did not answer in time is started again. */
const TEMPORAL_START_TRIES = 3;

/**
 * A real Temporal dev server for a test file, from the CLI that set-up placed in the cache. The
 * SDK gives a starting server five seconds to answer, then kills it. The suite's files start
 * together, so on two busy cores a start can miss that; it is tried again, other errors are not.
 */
export async function startTestTemporal(): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: loadConfig().temporal.cliPath } } });
    } catch (error) {
      const timedOut = error instanceof Error && /did not start within/.test(error.message);
      if (!timedOut || attempt >= TEMPORAL_START_TRIES) throw error;
    }
  }
}

export interface JobsStack {
  env: TestWorkflowEnvironment;
  app: FastifyInstance;
  engine: Engine;
  store: JobStore;
  /** A job service and a worker on another task queue of the same stack. */
  jobService(taskQueue: string, parallelism: number, chunksPerRun?: number): JobService;
  worker(taskQueue: string): ReturnType<typeof createJobWorker>;
  stop(): Promise<void>;
}

/** The service as `npm start` runs it, in one process: dev server, API with jobs, a worker (and the job store in DATA_DIR unless another is given). */
export async function startJobsStack(config: Config, taskQueue: string, parallelism: number, store = JobStore.local(config.dataDir)): Promise<JobsStack> {
  const env = await startTestTemporal();
  const engine = new Engine(config.engine);
  const jobService = (queue: string, lanes: number, chunksPerRun = 500) =>
    new JobService(env.client, store, engine, { taskQueue: queue, parallelism: lanes, heartbeatTimeoutMs: 10_000, chunksPerRun });
  const beta = await openProcessBetaDatabase(config.dataDir, {});
  const betaJobs = { db: beta.db, locator: config.beta, workDir: path.join(config.dataDir, 'beta-job-work') };
  const worker = (queue: string) =>
    createJobWorker(
      { address: env.address, namespace: 'default', taskQueue: queue, forecastsPerChunk: 2, webhookHosts: config.schedules.webhookHosts },
      engine,
      store,
      betaJobs,
    );
  const app = await testServer(config, undefined, jobService(taskQueue, parallelism), engine);
  const running = await worker(taskQueue);
  const working = running.run();
  return {
    env,
    app,
    engine,
    store,
    jobService,
    worker,
    async stop() {
      await app.close();
      running.shutdown();
      await working;
      await env.teardown();
      await engine.close();
      store.close();
      beta.close();
    },
  };
}

export async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
