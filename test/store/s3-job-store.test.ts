import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../config.ts';
import { StoreUnavailableError } from '../../store/errors.ts';
import { JobStore } from '../../store/job-store.ts';
import { S3Bucket } from '../../store/s3-bucket.ts';
import { AUTH, hourlySeries, tempDataDir, testConfig } from '../api/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../jobs/temporal-env.ts';
import { filePart, multipartBody, queryPart, RETAIL, retailQuery, writeParquet } from '../beta/helpers.ts';
import { bucketConnection, startMinio, type Minio } from './minio.ts';

/**
 * The job store in an S3-compatible bucket (STORAGE_URL=s3://...), against a real MinIO server:
 * objects, Parquet through DuckDB's httpfs, jobs through Temporal, the analyst's query over every
 * job, the store going away mid-job, and a store that cannot be used stopping the start.
 */

let minio: Minio;
beforeAll(async () => {
  minio = await startMinio();
  await minio.createBucket('jobs');
}, 120_000);
afterAll(async () => {
  await minio?.dispose();
});

const analystConnection = () => bucketConnection(minio, 'jobs');

// First in the file: the sweep runs once per process, before its first upload.
test("a process's first upload removes the staging files a killed one left in the temporary folder", async () => {
  const ended = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => ended.once('exit', resolve));
  const leftover = path.join(os.tmpdir(), `store-put-${ended.pid}-left-by-a-killed-worker`);
  fs.writeFileSync(leftover, 'a chunk part');
  const bucket = new S3Bucket('jobs', 'staging/', loadConfig(minio.env('jobs')).storage.s3);
  await bucket.writeWith('objects/one.json', (file) => fs.promises.writeFile(file, '{}'));
  expect(await bucket.exists('objects/one.json')).toBe(true);
  expect(fs.existsSync(leftover)).toBe(false);
});

test('a store that takes connections but never answers is away after its deadline, not a call that hangs', async () => {
  const silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const settings = loadConfig({ ...minio.env('jobs'), AWS_ENDPOINT_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }).storage.s3;
    const bucket = new S3Bucket('jobs', '', { ...settings, timeouts: { connectMs: 1_000, idleMs: 500 } });
    const started = Date.now();
    await expect(bucket.readJson('jobs/x/job.json')).rejects.toBeInstanceOf(StoreUnavailableError);
    // Three attempts of half a second each, and the SDK's backoff between them.
    expect(Date.now() - started).toBeLessThan(10_000);
    bucket.close();
  } finally {
    silent.close();
  }
});

describe('a store that cannot be used stops the start with a clear message', () => {
  test.each([
    ['a missing bucket', { STORAGE_URL: 's3://no-such-bucket/' }, /the bucket 'no-such-bucket' does not exist; create it first/],
    ['bad credentials', { AWS_SECRET_ACCESS_KEY: 'not-the-secret' }, /access denied; check the credentials/],
    ['an unreachable store', { AWS_ENDPOINT_URL: 'http://127.0.0.1:9' }, /cannot be reached: .*ECONNREFUSED/],
  ])('%s', async (_, change, message) => {
    const store = JobStore.open(loadConfig({ ...minio.env('jobs', 'start/'), ...change }).storage);
    await expect(store.check()).rejects.toThrow(message);
    store.close();
  });

  test('the worker process exits with the message, before it starts anything else', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/worker.ts'], {
      env: { ...process.env, ...minio.env('no-such-bucket'), DATA_DIR: tempDataDir(), TEMPORAL_ADDRESS: '127.0.0.1:9' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /Cannot start: the job store s3:\/\/no-such-bucket\/ at http:\/\/127\.0\.0\.1:\d+ cannot be used: the bucket 'no-such-bucket' does not exist/,
    );
  }, 60_000);
});

describe('jobs with their store in a bucket', () => {
  let stack: JobsStack;
  let app: FastifyInstance;
  const config = testConfig();
  const submit = async (model: string, body: unknown) => {
    const res = await app.inject({ method: 'POST', url: `/forecast-jobs?model=${model}`, headers: AUTH, payload: body as object });
    expect(res.statusCode).toBe(200);
    return res.json().job_id as string;
  };
  const poll = (id: string, timeoutMs = 120_000) =>
    until(
      async () => {
        const res = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH });
        const body = res.json();
        return res.statusCode === 200 && body.status !== 'in_progress' ? body : undefined;
      },
      timeoutMs,
      `job ${id}`,
    );
  const backtest = (count: number) => ({
    series: hourlySeries(count, 72).map((s) => ({ ...s, fcds: [48, 60] })),
    horizon: 12,
    freq: 'H',
    quantiles: [0.1, 0.9],
  });

  beforeAll(async () => {
    const store = JobStore.open(minio.storage('jobs', 'service/'));
    await store.check();
    stack = await startJobsStack(config, 's3-jobs', 4, store);
    app = stack.app;
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test('a job completes with exactly the synchronous answer, and its results are downloadable', async () => {
    const body = backtest(5);
    const id = await submit('seasonal-naive', body);
    const done = await poll(id);
    expect(done.status).toBe('completed');
    const sync = (await app.inject({ method: 'POST', url: '/forecast?model=seasonal-naive', headers: AUTH, payload: body })).json();
    expect(done.series).toEqual(sync.series);
    const parquet = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}/predictions.parquet`, headers: AUTH });
    expect(parquet.statusCode).toBe(200);
    expect(parquet.rawPayload.subarray(0, 4).toString()).toBe('PAR1');
    const list = (await app.inject({ method: 'GET', url: '/forecast-jobs', headers: AUTH })).json();
    expect(list.jobs.map((j: { job_id: string }) => j.job_id)).toContain(id);
  }, 180_000);

  test('one DuckDB query over the bucket ranks models across jobs (hive partitions)', async () => {
    const body = backtest(6);
    const ids = { naive: await submit('naive', body), 'seasonal-naive': await submit('seasonal-naive', body) };
    for (const id of Object.values(ids)) expect((await poll(id)).status).toBe('completed');
    const { connection, close } = await analystConnection();
    const ranking = (
      await connection.runAndReadAll(
        `SELECT model, count(DISTINCT job_id)::INTEGER AS jobs, count(*)::INTEGER AS forecasts, avg(mae) AS mae
         FROM read_parquet('s3://jobs/service/results/**/metrics/*.parquet', hive_partitioning = true)
         WHERE job_id IN ('${ids.naive}', '${ids['seasonal-naive']}') GROUP BY model ORDER BY mae`,
      )
    ).getRowObjects();
    close();
    // A daily cycle: repeating the last day beats repeating the last hour.
    expect(ranking.map((r) => [r.model, r.jobs, r.forecasts])).toEqual([
      ['seasonal-naive', 1, 12],
      ['naive', 1, 12],
    ]);
  }, 180_000);

  test('beta jobs from an uploaded Parquet file: parts through the bucket, and one query ranks models over both kinds of job', async () => {
    const sales = await writeParquet(path.join(tempDataDir(), 'sales.parquet'), RETAIL);
    const parts = () => [queryPart(retailQuery({ cutoff: [{ every: '2d', start: '2024-01-08' }] })), filePart('sales', sales)];
    const post = (url: string) => {
      const body = multipartBody(parts());
      return app.inject({ method: 'POST', url, headers: { ...AUTH, ...body.headers }, payload: body.payload });
    };
    const ids: Record<string, string> = {};
    for (const model of ['naive', 'seasonal-naive']) ids[model] = (await post(`/v1-beta/forecast-jobs?model=${model}`)).json().job_id;
    for (const id of Object.values(ids)) {
      const done = await until(
        async () => {
          const body = (await app.inject({ method: 'GET', url: `/v1-beta/forecast-jobs/${id}`, headers: AUTH })).json();
          return body.status !== 'in_progress' && body;
        },
        120_000,
        `beta job ${id}`,
      );
      expect(done.status).toBe('completed');
    }
    const expected = async (model: string) => {
      const { metrics } = (await post(`/v1-beta/forecast?model=${model}`)).json();
      return { forecasts: metrics.cutoff.length, mae: metrics.targets.sales.mae.reduce((a: number, b: number) => a + b, 0) / metrics.cutoff.length };
    };
    const { connection, close } = await analystConnection();
    const ranking = (
      await connection.runAndReadAll(
        `SELECT model, count(*)::INTEGER AS forecasts, avg(mae) AS mae
         FROM read_parquet('s3://jobs/service/results/**/metrics/*.parquet', hive_partitioning = true, union_by_name = true)
         WHERE job_id IN ('${ids.naive}', '${ids['seasonal-naive']}') AND known_steps > 0 GROUP BY model ORDER BY model`,
      )
    ).getRowObjects();
    close();
    const naive = await expected('naive');
    const seasonal = await expected('seasonal-naive');
    expect(ranking.map((r) => r.model)).toEqual(['naive', 'seasonal-naive']);
    expect(ranking[0].forecasts).toBe(naive.forecasts);
    expect(ranking[0].mae).toBeCloseTo(naive.mae, 12);
    expect(ranking[1].forecasts).toBe(seasonal.forecasts);
    expect(ranking[1].mae).toBeCloseTo(seasonal.mae, 12);
  }, 240_000);

  test('the store away for a while: chunks retry and every forecast is written exactly once', async () => {
    const series = 150;
    const id = await submit('seasonal-naive', backtest(series));
    await until(
      async () => ((await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json().progress?.done ?? 0) >= 20,
      60_000,
      'progress',
    );
    await minio.stop();
    const away = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH });
    expect(away.statusCode).toBe(503);
    expect(away.json().code).toBe('storage_unavailable');
    // The store's address stays in the log.
    expect(away.json().detail).toBe('the job store cannot be reached right now; nothing stored was lost, try again shortly');
    await new Promise((r) => setTimeout(r, 4_000));
    await minio.start();
    const done = await poll(id, 240_000);
    expect(done.status).toBe('completed');
    const { connection, close } = await analystConnection();
    const counts = (
      await connection.runAndReadAll(
        `SELECT count(*)::INTEGER AS n, count(DISTINCT (series_index, fcd_index))::INTEGER AS pairs
         FROM read_parquet('s3://jobs/service/results/job_id=${id}/metrics/*.parquet')`,
      )
    ).getRowObjects()[0];
    close();
    expect(counts).toEqual({ n: series * 2, pairs: series * 2 });
  }, 300_000);
});
