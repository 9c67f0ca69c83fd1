/**
 * An API replica (RUN_WORKER=false) started from the sources, as `npm start` starts it, never
 * loads the Temporal SDK's worker or webpack: refuse-worker-packages.mjs stops the process if it
 * does. It still answers forecasts and takes jobs, left in the queue for the workers. The same
 * refusal stops a process that does run a worker, so the check does not pass by missing the load.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { tempDataDir } from '../api/helpers.ts';
import { api, killEverything, startProcess } from '../jobs/service-processes.ts';
import { startTestTemporal, until } from '../jobs/temporal-env.ts';
import { freePort } from '../store/minio.ts';

const REFUSE_WORKER_PACKAGES = path.join(import.meta.dirname, 'refuse-worker-packages.mjs');
const REFUSAL = 'a package only a job worker needs was loaded at run time';
let temporal: TestWorkflowEnvironment;

beforeAll(async () => {
  temporal = await startTestTemporal();
});

afterAll(async () => {
  killEverything();
  await temporal?.teardown();
});

async function startApi(runWorker: boolean) {
  const port = await freePort();
  const env = { RUN_WORKER: String(runWorker), TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'api-replica', DATA_DIR: tempDataDir() };
  return { port, process: startProcess('bin/server.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' }, [REFUSE_WORKER_PACKAGES]) };
}

const index = Array.from({ length: 16 }, (_, d) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10));
const request = { series: [{ target: index.map((_, t) => 10 + (t % 7)), index }], horizon: 2, freq: 'D' };

test('with RUN_WORKER=false the API answers and takes jobs without loading the worker packages', async () => {
  const { port, process: apiProcess } = await startApi(false);
  await until(
    () =>
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => apiProcess.child.exitCode !== null && Promise.reject(new Error(`the API exited: ${apiProcess.stderr()}`)),
      ),
    90_000,
    'the API process',
  );
  expect((await api(port, 'POST', '/forecast?model=naive', request)).status).toBe(200);
  const submitted = await api(port, 'POST', '/forecast-jobs?model=naive', request);
  expect(submitted.status).toBe(200);
  // No worker polls this queue: the job waits for one.
  expect((await api(port, 'GET', `/forecast-jobs/${submitted.body.job_id}`)).body).toMatchObject({ status: 'in_progress' });
  expect(apiProcess.stderr()).not.toContain(REFUSAL);
  expect(apiProcess.child.exitCode).toBeNull();
}, 120_000);

test('the same refusal stops a process that runs a worker, naming the package', async () => {
  const { process: withWorker } = await startApi(true);
  expect((await withWorker.exited).code).toBe(1);
  expect(withWorker.stderr()).toContain(`${REFUSAL}: node_modules/@temporalio/worker`);
}, 120_000);
