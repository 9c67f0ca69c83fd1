import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { FastifyInstance } from 'fastify';
import { createJobWorker } from '../../activities/worker.ts';
import { defaultTemporalCli, type Config } from '../../api/config.ts';
import { JobService } from '../../api/jobs/job-service.ts';
import { closeWorkerPool } from '../../engine/worker-pool.ts';
import { testServer } from '../api/helpers.ts';

/** A real Temporal dev server for a test file, from the CLI that set-up placed in the cache. */
export function startTestTemporal(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: defaultTemporalCli() } } });
}

export interface JobsStack {
  env: TestWorkflowEnvironment;
  app: FastifyInstance;
  stop(): Promise<void>;
}

/** The service as `npm start` runs it, in one process: dev server, API with jobs, a worker. */
export async function startJobsStack(config: Config, taskQueue: string, parallelism: number): Promise<JobsStack> {
  const env = await startTestTemporal();
  const jobs = new JobService(env.client, { dataDir: config.dataDir, taskQueue, parallelism, heartbeatTimeoutMs: 10_000 });
  const app = await testServer(config, undefined, jobs);
  const worker = await createJobWorker({ address: env.address, namespace: 'default', taskQueue, dataDir: config.dataDir, forecastsPerChunk: 2 });
  const working = worker.run();
  return {
    env,
    app,
    async stop() {
      await app.close();
      worker.shutdown();
      await working;
      await env.teardown();
      await closeWorkerPool();
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
