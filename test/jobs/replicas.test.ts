import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig, type Environment } from '../../config.ts';
import { JobStore } from '../../store/job-store.ts';
import { dailyRequest, tempDataDir } from '../api/helpers.ts';
import { writeLegacyKeys } from '../store/legacy-keys.ts';
import { freePort, startMinio, type Minio } from '../store/minio.ts';
import { killEverything, slowRequest, startProcess, waitForApi, type RunningProcess } from './service-processes.ts';
import { startTestTemporal, until } from './temporal-env.ts';

/**
 * Replicas share everything a user sees: two real API processes (`npm start`'s entry), each with
 * its own DATA_DIR, on one job store and one Temporal. A key made on one works on the other, a
 * job submitted on one is polled, downloaded, cancelled and deleted on the other, and a key
 * revoked on one is refused by the other within 5 s (with the server's default refresh). Run on
 * a shared folder and on a MinIO bucket.
 */

const run = promisify(execFile);
let temporal: TestWorkflowEnvironment;
let minio: Minio;

beforeAll(async () => {
  [temporal, minio] = await Promise.all([startTestTemporal(), startMinio()]);
  await minio.createBucket('replicas');
}, 120_000);

afterAll(async () => {
  killEverything();
  await temporal?.teardown();
  await minio?.dispose();
});

interface Replica {
  port: number;
  dataDir: string;
  process: RunningProcess;
}

async function startReplica(store: Environment, queue: string, runWorker: boolean, dataDir = tempDataDir()): Promise<Replica> {
  const port = await freePort();
  const env = { ...store, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: queue };
  const started = startProcess('bin/server.ts', { ...env, RUN_WORKER: String(runWorker) });
  await waitForApi(port).catch((error: Error) => {
    throw new Error(`${error.message}: ${started.stderr()}`);
  });
  return { port, dataDir, process: started };
}

/** The key CLI as an operator runs it on a replica's machine: its DATA_DIR, the shared store. */
const keysCli = (replica: Replica, store: Environment, args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'bin/keys.ts', ...args], { env: { ...process.env, ...store, DATA_DIR: replica.dataDir } });

async function call(replica: Replica, key: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${replica.port}${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = res.headers.get('content-type')?.includes('json') ? JSON.parse(bytes.toString()) : undefined;
  return { status: res.status, json, bytes };
}

/** When the key was revoked, as its revocation record in the store says. */
async function revocation(storeEnv: Environment, id: string): Promise<string | null | undefined> {
  const store = JobStore.open(loadConfig(storeEnv).storage);
  try {
    return (await store.apiKeys.list()).find((k) => k.id === id)?.revoked_at;
  } finally {
    store.close();
  }
}

const STORES: [string, () => Environment][] = [
  ['a shared folder', () => ({ STORAGE_URL: `file://${tempDataDir()}` })],
  ['a MinIO bucket', () => minio.env('replicas', `${randomUUID()}/`)],
];

test.each(STORES)(
  'two API processes on %s and one Temporal share keys and jobs',
  async (_, storeEnv) => {
    const store = storeEnv();
    const queue = `replicas-${randomUUID()}`;
    // A's DATA_DIR holds an old keys.duckdb: A imports it at start, into the store B reads.
    const dataDirA = tempDataDir();
    const [legacy, legacyRevoked] = await writeLegacyKeys(dataDirA, [
      { principal: 'legacy-team', revoked: false },
      { principal: 'legacy-team', revoked: true },
    ]);
    const [a, b] = await Promise.all([startReplica(store, queue, true, dataDirA), startReplica(store, queue, false)]);
    try {
      expect((await call(b, legacy.key, 'GET', '/forecast-jobs')).status).toBe(200);
      expect((await call(b, legacyRevoked.key, 'GET', '/forecast-jobs')).status).toBe(401);

      // A key made where A runs works on B at once.
      const created = await keysCli(a, store, ['create', 'replica-team']);
      const [, id] = /created key ([\w-]+)/.exec(created.stdout)!;
      const key = created.stdout.trim().split('\n').pop()!;
      expect(await call(b, key, 'GET', '/forecast-jobs')).toMatchObject({ status: 200, json: { jobs: [] } });

      // A job submitted on A (whose worker runs it) is polled and downloaded on B.
      const submitted = await call(a, key, 'POST', '/forecast-jobs?model=naive', dailyRequest());
      expect(submitted.status).toBe(200);
      const jobId = submitted.json.job_id;
      const done = await until(
        async () => {
          const res = await call(b, key, 'GET', `/forecast-jobs/${jobId}`);
          return res.json.status !== 'in_progress' && res.json;
        },
        60_000,
        'the job on B',
      );
      expect(done.status).toBe('completed');
      expect(done.series[0][0].prediction.mean).toHaveLength(3);
      const download = await call(b, key, 'GET', `/forecast-jobs/${jobId}/predictions.parquet`);
      expect(download.status).toBe(200);
      expect(download.bytes.subarray(0, 4).toString()).toBe('PAR1');

      // A long job submitted on A is cancelled, then deleted, on B.
      const long = await call(a, key, 'POST', '/forecast-jobs?model=aarima', slowRequest(8, 200));
      expect(long.status, JSON.stringify(long.json)).toBe(200);
      const slow = long.json.job_id;
      expect(await call(b, key, 'POST', `/forecast-jobs/${slow}/cancel`)).toMatchObject({ status: 200, json: { job_id: slow, status: 'cancelling' } });
      const cancelled = await until(
        async () => {
          const res = await call(b, key, 'GET', `/forecast-jobs/${slow}`);
          return res.json.status !== 'in_progress' && res.json;
        },
        30_000,
        'the cancellation',
      );
      expect(cancelled.error.code).toBe('cancelled');
      expect(await call(b, key, 'DELETE', `/forecast-jobs/${slow}`)).toMatchObject({ status: 200, json: { job_id: slow, status: 'deleted' } });
      expect((await call(a, key, 'GET', `/forecast-jobs/${slow}`)).status).toBe(404);

      // A key revoked where B runs is refused on A within 5 s of its revocation record's time.
      expect((await keysCli(b, store, ['revoke', id])).stdout).toBe('revoked 1 key(s)\n');
      const unknownJob = `/forecast-jobs/${randomUUID()}`;
      const refusedAt = await until(
        async () => {
          const { status } = await call(a, key, 'GET', unknownJob);
          if (status !== 401) expect(status).toBe(404);
          return status === 401 && Date.now();
        },
        10_000,
        'the revoked key to be refused',
      );
      const revokedAt = Date.parse((await revocation(store, id))!);
      expect(refusedAt - revokedAt).toBeLessThan(5_000);
    } finally {
      a.process.child.kill('SIGKILL');
      b.process.child.kill('SIGKILL');
      await Promise.all([a.process.exited, b.process.exited]);
    }
  },
  120_000,
);
