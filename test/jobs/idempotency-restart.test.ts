import { spawn, type ChildProcess } from 'node:child_process';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Environment } from '../../config.ts';
import { JobStore } from '../../store/job-store.ts';
import { LocalFolder, type ObjectStore } from '../../store/object-store.ts';
import { S3Bucket } from '../../store/s3-bucket.ts';
import { dailyRequest, tempDataDir } from '../api/helpers.ts';
import { freePort, startMinio, type Minio } from '../store/minio.ts';
import { waitForApi } from './service-processes.ts';
import { startTestTemporal } from './temporal-env.ts';

/**
 * Idempotency-Key records live in the job store, not in a process: with real API processes
 * (`npm start`'s entry, RUN_WORKER=false) on one Temporal server, a key keeps answering its job
 * after the API process is killed and another started on the same DATA_DIR, and two API processes
 * sharing only a bucket (MinIO) answer one job for one key, even when hit at once. Underneath, the
 * store's create-if-absent lets exactly one of concurrent creators win, on disk and in a bucket.
 */

const KEY = 'idempotency-restart-key';
const QUEUE = 'idempotency-restart';
let env: TestWorkflowEnvironment;
let minio: Minio;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  env = await startTestTemporal();
  minio = await startMinio();
  await minio.createBucket('idempotency');
}, 120_000);

afterAll(async () => {
  await Promise.all([...children].map(kill));
  await env?.teardown();
  await minio?.dispose();
});

async function startApi(extraEnv: Environment): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/server.ts'], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: QUEUE,
      RUN_WORKER: 'false',
      MODEL_THREADS: '1',
      PORT: String(port),
      HOST: '127.0.0.1',
      FORECAST_API_KEYS: `ops:${KEY}`,
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', () => undefined);
  children.add(child);
  child.once('exit', () => children.delete(child));
  await waitForApi(port);
  return { port, child };
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function submit(port: number, key: string, body: unknown = dailyRequest()) {
  const res = await fetch(`http://127.0.0.1:${port}/forecast-jobs?model=naive`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() };
}

describe("the store's create-if-absent", () => {
  const stores: [string, () => ObjectStore][] = [
    ['a local folder', () => new LocalFolder(tempDataDir())],
    ['an S3-compatible bucket', () => new S3Bucket('idempotency', 'objects/', minio.storage('idempotency').s3)],
  ];

  test.each(stores)('in %s: of concurrent creators exactly one wins, and the object is whole', async (_, open) => {
    const store = open();
    try {
      const won = await Promise.all(Array.from({ length: 12 }, (_, i) => store.createJson('race/record.json', { writer: i })));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect(await store.readJson('race/record.json')).toEqual({ writer: won.indexOf(true) });
      expect(await store.createJson('race/record.json', { writer: 99 })).toBe(false);
      expect(await store.children('race')).toEqual(['record.json']);
    } finally {
      store.close?.();
    }
  });

  test("in a bucket shared by two stores, one principal's lock is held by one at a time", async () => {
    const [a, b] = [0, 1].map(() => JobStore.open(minio.storage('idempotency', 'locks/')));
    let holders = 0;
    let most = 0;
    const work = async () => {
      most = Math.max(most, ++holders);
      await new Promise((resolve) => setTimeout(resolve, 20));
      holders -= 1;
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).activeJobs.locked('ops', work)));
    expect(most).toBe(1);
    a.close();
    b.close();
  });
});

test('a key answers its job after the API process is killed and another started on the same DATA_DIR', async () => {
  const dataDir = tempDataDir();
  const first = await startApi({ DATA_DIR: dataDir });
  const created = await submit(first.port, 'restart-1');
  expect(created.status).toBe(200);
  await kill(first.child);

  const second = await startApi({ DATA_DIR: dataDir });
  const replay = await submit(second.port, 'restart-1');
  expect(replay).toMatchObject({ status: 200, replayed: 'true', body: { job_id: created.body.job_id } });
  const other = await submit(second.port, 'restart-1', dailyRequest({ horizon: 5 }));
  expect(other.status).toBe(422);
  expect(other.body.code).toBe('idempotency_key_reused');
  const store = JobStore.local(dataDir);
  expect((await store.list()).map((m) => m.job_id)).toEqual([created.body.job_id]);
  store.close();
  await kill(second.child);
}, 240_000);

test('two API processes sharing a bucket answer one job per key, even when hit at once', async () => {
  const storage = minio.env('idempotency', 'shared/');
  const [a, b] = await Promise.all([startApi({ ...storage, DATA_DIR: tempDataDir() }), startApi({ ...storage, DATA_DIR: tempDataDir() })]);
  const created = await submit(a.port, 'shared-1');
  expect(created.status).toBe(200);
  expect((await submit(b.port, 'shared-1')).body.job_id).toBe(created.body.job_id);

  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(i % 2 ? a.port : b.port, 'shared-2')));
  const ids = new Set(answers.filter((r) => r.status === 200).map((r) => r.body.job_id));
  expect(ids.size).toBe(1);
  expect(answers.every((r) => r.status === 200 || (r.status === 409 && r.body.code === 'idempotency_key_in_use'))).toBe(true);

  const store = JobStore.open(minio.storage('idempotency', 'shared/'));
  expect((await store.list()).map((m) => m.job_id).sort()).toEqual([created.body.job_id, ...ids].sort());
  store.close();
}, 240_000);
