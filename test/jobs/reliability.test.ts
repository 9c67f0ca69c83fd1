import { spawn, type ChildProcess } from 'node:child_process';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Environment } from '../../config.ts';
import { tempDataDir } from '../api/helpers.ts';
import { bucketConnection, freePort, startMinio, type Minio } from '../store/minio.ts';
import { startTestTemporal, until } from './temporal-env.ts';

/**
 * Fault tests with real processes: worker processes (`npm run worker`'s entry) and an
 * API-only service process (`npm start`'s entry with RUN_WORKER=false), on one Temporal server,
 * with the job store in a local folder and in an S3-compatible bucket (MinIO). With the bucket,
 * each process has a DATA_DIR of its own: they share only Temporal and the bucket, as processes
 * on separate machines would.
 */

let env: TestWorkflowEnvironment;
let minio: Minio;
const children = new Set<ChildProcess>();
const KEY = 'reliability-key';
const SERIES = 240;

/** Where the processes keep jobs, and a DuckDB connection that reads a job's results there. */
interface StoreUnderTest {
  env(): Environment;
  results(id: string): string;
  connect(): Promise<{ connection: DuckDBConnection; close(): void }>;
}

const LOCAL_DATA = tempDataDir();
const STORES: Record<string, StoreUnderTest> = {
  'a local folder': {
    env: () => ({ DATA_DIR: LOCAL_DATA }),
    results: (id) => `${LOCAL_DATA}/results/job_id=${id}`,
    async connect() {
      const db = await DuckDBInstance.create(':memory:');
      const connection = await db.connect();
      return { connection, close: () => (connection.closeSync(), db.closeSync()) };
    },
  },
  'an S3-compatible bucket': {
    env: () => ({ ...minio.env('reliability', 'jobs/'), DATA_DIR: tempDataDir() }),
    results: (id) => `s3://reliability/jobs/results/job_id=${id}`,
    connect: () => bucketConnection(minio, 'reliability'),
  },
};

function start(entry: string, extraEnv: Environment): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: 'reliability',
      MODEL_THREADS: '1',
      JOB_CHUNK_FORECASTS: '1',
      JOB_PARALLELISM: '4',
      JOB_HEARTBEAT_TIMEOUT_MS: '2000',
      FORECAST_API_KEYS: `ops:${KEY}`,
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', () => undefined);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function api(port: number, method: string, url: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

const waitForApi = (port: number) =>
  until(
    () =>
      fetch(`http://127.0.0.1:${port}/openapi`)
        .then((r) => r.ok)
        .catch(() => false),
    90_000,
    'the API process',
  );

/** Many small series at two forecast creation dates: about 64 chunks of a few forecasts. */
function manySeries() {
  const index = Array.from({ length: 12 }, (_, d) => `2024-03-${String(d + 1).padStart(2, '0')}`);
  return {
    series: Array.from({ length: SERIES }, (_, i) => ({ target: index.map((_, t) => i + t + (t % 3)), index, fcds: [8, 12] })),
    horizon: 4,
    freq: 'D',
    quantiles: [0.2, 0.8],
  };
}

beforeAll(async () => {
  env = await startTestTemporal();
  minio = await startMinio();
  await minio.createBucket('reliability');
}, 120_000);

afterAll(async () => {
  await Promise.all([...children].map(kill));
  await env?.teardown();
  await minio?.dispose();
});

describe.each(Object.entries(STORES))('with the job store in %s', (_, store) => {
  // The other store's processes must not take this job's chunks from the shared task queue.
  afterEach(() => Promise.all([...children].map(kill)));

  test('a job survives a killed worker and a restarted API, and two workers share it; each forecast is written once', async () => {
    const workerA = start('bin/worker.ts', store.env());
    const workerB = start('bin/worker.ts', store.env());
    const port = await freePort();
    const apiEnv = { ...store.env(), PORT: String(port), HOST: '127.0.0.1', RUN_WORKER: 'false' };
    let apiProcess = start('bin/server.ts', apiEnv);
    await waitForApi(port);

    const submitted = await api(port, 'POST', '/forecast-jobs?model=naive', manySeries());
    expect(submitted.status).toBe(200);
    const id: string = submitted.body.job_id;
    const total = SERIES * 2;

    // Mid-job: kill worker A outright, and restart the API process.
    await until(async () => ((await api(port, 'GET', `/forecast-jobs/${id}`)).body.progress?.done ?? 0) >= 60, 120_000, 'progress');
    const midway = (await api(port, 'GET', `/forecast-jobs/${id}`)).body;
    expect(midway.status).toBe('in_progress');
    expect(midway.progress.done).toBeLessThan(total);
    await kill(workerA);
    await kill(apiProcess);
    apiProcess = start('bin/server.ts', apiEnv);
    await waitForApi(port);
    // Worker A comes back as a new process, as an operator would restart it.
    start('bin/worker.ts', store.env());

    const done = await until(
      async () => {
        const res = await api(port, 'GET', `/forecast-jobs/${id}`);
        return res.body.status !== 'in_progress' && res.body;
      },
      180_000,
      'the job to finish',
    );
    expect(done.status).toBe('completed');
    expect(done.series).toHaveLength(SERIES);
    expect(done.series.every((s: unknown[]) => s.length === 2)).toBe(true);

    // Exactly once: one metrics row and `horizon` prediction rows per (series, fcd).
    const { connection: db, close } = await store.connect();
    const results = store.results(id);
    const counts = (
      await db.runAndReadAll(
        `SELECT count(*)::INTEGER AS n, count(DISTINCT (series_index, fcd_index))::INTEGER AS distinct_pairs FROM read_parquet('${results}/metrics/*.parquet')`,
      )
    ).getRowObjects()[0];
    expect(counts).toEqual({ n: total, distinct_pairs: total });
    const steps = (await db.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${results}/predictions/*.parquet')`)).getRowObjects()[0].n;
    expect(steps).toBe(total * 4);
    close();

    // Both original workers ran the job's chunks.
    const history = await env.client.workflow.getHandle(id).fetchHistory();
    const identities = new Set(
      history.events?.flatMap((e) => (e.activityTaskStartedEventAttributes?.identity ? [e.activityTaskStartedEventAttributes.identity] : [])),
    );
    expect(identities.has(`${workerA.pid}@${(await import('node:os')).hostname()}`)).toBe(true);
    const retried = history.events?.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1).length ?? 0;
    console.log(`activities retried after the kill: ${retried}`);
    expect(identities.has(`${workerB.pid}@${(await import('node:os')).hostname()}`)).toBe(true);
  }, 420_000);
});
