/**
 * `npm run record-histories -- <release>`: runs real jobs of every shape the job workflow knows,
 * and a scheduled backtest's run, on a Temporal dev server, with the workflow code of this checkout, and writes each run's history
 * to `test/fixtures/workflow-histories/<release>/`. The replay test replays every folder there.
 * A folder is never overwritten: histories of a release stay as long as its jobs may still run.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { AUTH, testConfig } from '../api/helpers.ts';
import { filePart, multipartBody, queryPart, RETAIL, retailQuery, writeParquet } from '../beta/helpers.ts';
import { testTempDir } from '../temp-root.ts';
import { slowRequest, startProcess } from '../jobs/service-processes.ts';
import { startJobsStack, until, type JobsStack } from '../jobs/temporal-env.ts';
import { firstRunId, HISTORIES_DIR, historyToJSON, runHistories } from './histories.ts';

const PRINCIPAL = 'alice';

/** The model a request's `model_config` names, as the API's `?model=` would; naive without one. */
const modelOf = (request: unknown) => (request as { model_config?: { model: string } }).model_config?.model ?? 'naive';

/** Daily series for the naive model: quick chunks, so a job's shape, not its models, sets its length. */
function quickRequest(series: number) {
  const index = Array.from({ length: 20 }, (_, d) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10));
  return {
    series: Array.from({ length: series }, (_, i) => ({ target: index.map((_, t) => i + t + (t % 4)), index, fcds: [14, 17] })),
    horizon: 3,
    freq: 'D',
  };
}

async function waitClosed(client: Client, workflowId: string): Promise<string> {
  return until(
    async () => {
      const { status } = await client.workflow.getHandle(workflowId).describe();
      return status.name !== 'RUNNING' && status.name;
    },
    180_000,
    `job ${workflowId} to end`,
  );
}

/** Whether a chunk of the job is running on a worker now. */
async function chunkRunning(client: Client, workflowId: string): Promise<boolean> {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  return (raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'runChunk' && a.lastStartedTime);
}

type Recorded = Record<string, { workflowId: string; firstRunId: string; expected: string }>;

async function recordJobs(stack: JobsStack, dataDir: string, queue: string): Promise<Recorded> {
  const client = stack.env.client;
  const jobs: Recorded = {};
  const submit = async (name: string, expected: string, request: unknown, lanes: number, chunksPerRun?: number) => {
    const meta = await stack.jobService(queue, lanes, chunksPerRun).submit(ForecastRequest.parse(request), modelOf(request), PRINCIPAL);
    jobs[name] = { workflowId: meta.job_id, firstRunId: await firstRunId(client, meta.job_id), expected };
    return meta.job_id;
  };

  await waitClosed(client, await submit('stable-completed', 'COMPLETED', quickRequest(5), 2));
  await waitClosed(client, await submit('stable-continued-as-new', 'COMPLETED', quickRequest(5), 2, 2));

  // Cancelled while its second chunk runs: the first has finished, the second is cancelled on its worker.
  const cancelled = await submit('stable-slow-cancelled', 'CANCELLED', slowRequest(4, 200), 1);
  await until(async () => ((await client.workflow.getHandle(cancelled).query<{ chunksDone: number }>('progress')).chunksDone ?? 0) >= 1, 120_000, 'one chunk');
  await stack.jobService(queue, 1).cancel(cancelled);
  await waitClosed(client, cancelled);

  // A beta job, submitted as a client does, through the API of the stack's own task queue.
  const parquet = await writeParquet(path.join(dataDir, 'sales.parquet'), RETAIL);
  const body = multipartBody([queryPart(retailQuery({ cutoff: [{ every: '2d' }] })), filePart('sales', parquet)]);
  const res = await stack.app.inject({
    method: 'POST',
    url: '/v1-beta/forecast-jobs?model=naive',
    headers: { ...AUTH, ...body.headers },
    payload: body.payload,
  });
  if (res.statusCode !== 200) throw new Error(`the beta job was refused: ${res.body}`);
  const betaId: string = res.json().job_id;
  jobs['beta-completed'] = { workflowId: betaId, firstRunId: await firstRunId(client, betaId), expected: 'COMPLETED' };
  await waitClosed(client, betaId);
  return jobs;
}

/**
 * A chunk retried after its worker died: a worker process takes the job's first chunk and is
 * killed outright; once the heartbeat timeout passes, an in-process worker runs it again.
 */
async function recordWorkerDied(stack: JobsStack, dataDir: string): Promise<Recorded> {
  const queue = 'record-worker-died';
  const client = stack.env.client;
  const worker = startProcess('bin/worker.ts', {
    TEMPORAL_ADDRESS: stack.env.address,
    TEMPORAL_TASK_QUEUE: queue,
    DATA_DIR: dataDir,
    JOB_CHUNK_FORECASTS: '1',
  });
  const request = slowRequest(2, 300);
  const meta = await stack.jobService(queue, 1).submit(ForecastRequest.parse(request), modelOf(request), PRINCIPAL);
  const firstRun = await firstRunId(client, meta.job_id);
  await until(() => chunkRunning(client, meta.job_id), 120_000, 'the worker process to take a chunk');
  worker.child.kill('SIGKILL');
  await worker.exited;
  const replacement = await stack.worker(queue);
  const running = replacement.run();
  await waitClosed(client, meta.job_id);
  replacement.shutdown();
  await running;
  return { 'stable-slow-chunk-retried-after-worker-died': { workflowId: meta.job_id, firstRunId: firstRun, expected: 'COMPLETED' } };
}

/**
 * A scheduled backtest's run: a schedule over a locator is triggered once, its run makes a beta
 * job as a child workflow, records the run and ends. Recorded is the run's own workflow.
 */
async function recordScheduledRun(stack: JobsStack, dataRoot: string): Promise<Recorded> {
  const client = stack.env.client;
  fs.mkdirSync(path.join(dataRoot, 'daily'), { recursive: true });
  await writeParquet(path.join(dataRoot, 'daily', 'part-1.parquet'), RETAIL);
  const query = { ...retailQuery({ cutoff: [{ every: '2d', last: 2 }] }), input: { ...retailQuery().input, source: 'daily/*.parquet' } };
  const body = { query, spec: { cron: '0 6 * * 1', time_zone: 'Europe/Berlin' }, paused: true };
  const made = await stack.app.inject({ method: 'POST', url: '/v1-beta/forecast-schedules?model=naive', headers: AUTH, payload: body });
  if (made.statusCode !== 201) throw new Error(`the schedule was refused: ${made.body}`);
  const scheduleId: string = made.json().schedule_id;
  await stack.app.inject({ method: 'POST', url: `/v1-beta/forecast-schedules/${scheduleId}/trigger`, headers: AUTH });
  const workflowId = await until(
    async () => (await client.schedule.getHandle(scheduleId).describe()).info.recentActions[0]?.action.workflow.workflowId,
    60_000,
    'the triggered run',
  );
  const recorded = { workflowId, firstRunId: await firstRunId(client, workflowId), expected: 'COMPLETED' };
  await waitClosed(client, workflowId);
  await client.schedule.getHandle(scheduleId).delete();
  return { 'scheduled-run-completed': recorded };
}

async function main(release: string | undefined): Promise<void> {
  if (!release || !/^[\w.-]+$/.test(release)) throw new Error('usage: npm run record-histories -- <release>   (a folder name, such as the version)');
  const target = path.join(HISTORIES_DIR, release);
  if (fs.existsSync(target)) throw new Error(`${target} exists: histories are never overwritten; record into a new release folder`);
  const dataDir = testTempDir('record-histories-');
  const dataRoot = path.join(dataDir, 'data-root');
  fs.mkdirSync(dataRoot);
  const queue = 'record-histories';
  const config = testConfig({ dataDir });
  const stack = await startJobsStack({ ...config, beta: { ...config.beta, dataRoot } }, queue, 2);
  try {
    const jobs = {
      ...(await recordJobs(stack, dataDir, queue)),
      ...(await recordWorkerDied(stack, dataDir)),
      ...(await recordScheduledRun(stack, dataRoot)),
    };
    fs.mkdirSync(target, { recursive: true });
    for (const [name, job] of Object.entries(jobs)) {
      const status = (await stack.env.client.workflow.getHandle(job.workflowId).describe()).status.name;
      if (status !== job.expected) throw new Error(`job ${name} ended ${status}, not ${job.expected}`);
      const runs = await runHistories(stack.env.client, job.workflowId, job.firstRunId);
      runs.forEach((history, n) => {
        const file = path.join(target, `${name}${runs.length > 1 ? `-run${n + 1}` : ''}.json`);
        fs.writeFileSync(file, JSON.stringify(historyToJSON(history), null, 1) + '\n');
        console.error(`${path.relative(process.cwd(), file)}: ${history.events?.length} events`);
      });
    }
  } finally {
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main(process.argv[2]).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
