/**
 * A rolling upgrade with jobs running: a job starts on workers of one release's workflow code,
 * those workers stop mid-job (a chunk in flight is handed back), and workers of the next release
 * finish it. The job completes with every forecast written once, which summarizeJob checks.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createJobWorker, jobWorkflowCode, type WorkflowCode } from '../../activities/job-worker.ts';
import { JobService } from '../../api/jobs/job-service.ts';
import { openProcessBetaDatabase } from '../../engine/beta/beta-database.ts';
import { Engine } from '../../engine/engine.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { JobStore } from '../../store/job-store.ts';
import { testConfig } from '../api/helpers.ts';
import { startTestTemporal, until } from '../jobs/temporal-env.ts';
import { firstRunId, runHistories } from './histories.ts';
import { REORDER_PATCH, summaryBeforeChunks, todaysWorkflow, writeVariant } from './workflow-variants.ts';

const RELEASES_DIR = path.resolve(import.meta.dirname, '../fixtures/workflow-releases');
/** The newest release's job workflow: the code that runs in production until this checkout ships. */
const previousRelease = fs
  .readdirSync(RELEASES_DIR)
  .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
  .at(-1)!;

const config = testConfig();
let env: TestWorkflowEnvironment;
let engine: Engine;
let store: JobStore;
let beta: Awaited<ReturnType<typeof openProcessBetaDatabase>>;
const removals: (() => void)[] = [];

beforeAll(async () => {
  env = await startTestTemporal();
  engine = new Engine(config.engine);
  store = JobStore.local(config.dataDir);
  beta = await openProcessBetaDatabase(config.dataDir, {});
}, 120_000);

afterAll(async () => {
  await env?.teardown();
  await engine?.close();
  store?.close();
  beta?.close();
  removals.forEach((remove) => remove());
});

async function startWorker(taskQueue: string, workflowCode: WorkflowCode) {
  const betaJobs = { db: beta.db, locator: config.beta, workDir: path.join(config.dataDir, 'beta-job-work') };
  const worker = await createJobWorker({ address: env.address, namespace: 'default', taskQueue, forecastsPerChunk: 1, workflowCode }, engine, store, betaJobs);
  const running = worker.run();
  return async () => {
    worker.shutdown();
    await running;
  };
}

/** One-forecast chunks of the naive model: quick, so the job's shape sets its length. */
function request() {
  const index = Array.from({ length: 20 }, (_, d) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10));
  return ForecastRequest.parse({
    series: Array.from({ length: 20 }, (_, i) => ({ target: index.map((_, t) => i + t + (t % 4)), index, fcds: [14, 17] })),
    horizon: 3,
    freq: 'D',
  });
}

/** The build ids of the workflow code that completed the job's workflow tasks, in order, over all its runs. */
async function buildIdsOf(jobId: string): Promise<string[]> {
  const ids: string[] = [];
  for (const history of await runHistories(env.client, jobId, await firstRunId(env.client, jobId))) {
    for (const e of history.events ?? []) {
      const done = e.workflowTaskCompletedEventAttributes;
      if (done) ids.push(done.workerVersion?.buildId || done.binaryChecksum || '');
    }
  }
  return [...new Set(ids)];
}

/** Starts a job on the old code, stops its workers after a few chunks, and lets the new code finish it. */
async function upgradeMidJob(taskQueue: string, oldCode: WorkflowCode, newCode: WorkflowCode, chunksPerRun: number) {
  const jobs = new JobService(env.client, store, engine, { taskQueue, parallelism: 1, heartbeatTimeoutMs: 10_000, chunksPerRun });
  const stopOld = await startWorker(taskQueue, oldCode);
  const { job_id: jobId } = await jobs.submit(request(), 'naive', 'alice');
  await until(
    async () => {
      const state = await jobs.state(jobId);
      return state.status === 'in_progress' && (state.progress?.chunksDone ?? 0) >= 3;
    },
    60_000,
    'chunks on the old code',
  );
  await stopOld();
  const midway = await jobs.state(jobId);
  expect(midway.status).toBe('in_progress');
  const stopNew = await startWorker(taskQueue, newCode);
  try {
    await until(async () => (await jobs.state(jobId)).status !== 'in_progress', 120_000, 'the new code to finish the job');
    return { state: await jobs.state(jobId), buildIds: await buildIdsOf(jobId) };
  } finally {
    await stopNew();
  }
}

describe('a job running across a workflow upgrade', () => {
  test(`started by release ${previousRelease}'s workflow code, it completes under this checkout's`, async () => {
    const previous = { workflowsPath: path.join(RELEASES_DIR, previousRelease, 'forecast-job.ts') };
    // Short runs: the job continues as new on both sides of the upgrade.
    const { state, buildIds } = await upgradeMidJob('upgrade-from-release', previous, jobWorkflowCode(), 8);
    expect(state).toEqual({ status: 'completed' });
    // Both codes completed workflow tasks: the old one first, then the new one.
    expect(buildIds).toHaveLength(2);
  }, 240_000);

  test('an incompatible change shipped behind patched() finishes a job the code before it started', async () => {
    const patched = writeVariant('upgrade-patched', summaryBeforeChunks(todaysWorkflow(), REORDER_PATCH));
    removals.push(patched.remove);
    // One run: a job the old code started stays on the old path to its end, as patched() promises.
    const { state, buildIds } = await upgradeMidJob('upgrade-behind-patch', jobWorkflowCode(), { workflowsPath: patched.path }, 500);
    expect(state).toEqual({ status: 'completed' });
    expect(buildIds).toHaveLength(2);
  }, 240_000);
});
