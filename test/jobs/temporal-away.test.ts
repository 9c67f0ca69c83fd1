import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { FastifyInstance } from 'fastify';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { JobService } from '../../api/jobs/job-service.ts';
import { Engine } from '../../engine/engine.ts';
import { JobStore } from '../../store/job-store.ts';
import { AUTH, dailyRequest, testConfig, testServer } from '../api/helpers.ts';
import { startTestTemporal } from './temporal-env.ts';

/**
 * Temporal (the job scheduler) going away under a running API: job operations answer 503
 * `scheduler_unavailable` with Retry-After, not a 500; nothing already accepted is lost and a
 * refused submission leaves nothing behind; synchronous forecasts go on.
 */

const config = testConfig();
let env: TestWorkflowEnvironment;
let engine: Engine;
let app: FastifyInstance;
let connection: Connection;
let store: JobStore;
let serverGone = false;

beforeAll(async () => {
  env = await startTestTemporal();
  engine = new Engine(config.engine);
  // The API's own connection, which outlives the server. The SDK's default retries a call that
  // gets no answer for about 20 s; two attempts keep this test short, and fail the same way.
  connection = await Connection.connect({ address: env.address, interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 2 }))] });
  const jobs = new JobService(new Client({ connection }), (store = JobStore.local(config.dataDir)), engine, {
    taskQueue: 'no-worker',
    parallelism: 1,
    heartbeatTimeoutMs: 10_000,
    chunksPerRun: 10,
  });
  app = await testServer(config, undefined, jobs, engine);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await engine?.close();
  await connection?.close();
  // Where the test failed before taking the server away.
  if (!serverGone) await env?.teardown();
});

test('with Temporal away, job operations are 503 scheduler_unavailable; accepted jobs stay, refused ones leave nothing', async () => {
  const accepted = await app.inject({ method: 'POST', url: '/forecast-jobs?model=naive', headers: AUTH, payload: dailyRequest() });
  expect(accepted.statusCode).toBe(200);
  const jobId = accepted.json().job_id as string;
  await env.teardown();
  serverGone = true;

  const answers = await Promise.all([
    app.inject({ method: 'POST', url: '/forecast-jobs?model=naive', headers: AUTH, payload: dailyRequest() }),
    app.inject({ method: 'GET', url: `/forecast-jobs/${jobId}`, headers: AUTH }),
    app.inject({ method: 'GET', url: '/forecast-jobs', headers: AUTH }),
    app.inject({ method: 'POST', url: `/forecast-jobs/${jobId}/cancel`, headers: AUTH }),
    app.inject({ method: 'DELETE', url: `/forecast-jobs/${jobId}`, headers: AUTH }),
  ]);
  for (const res of answers) {
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({ status: 503, code: 'scheduler_unavailable' });
    expect(res.json().detail).toMatch(
      /^the job scheduler \(Temporal\) cannot be reached right now \(UNAVAILABLE\); nothing was started or changed, try again shortly$/,
    );
  }
  // The accepted job is still there (its DELETE changed nothing); the refused one left nothing.
  expect((await store.list()).map((meta) => meta.job_id)).toEqual([jobId]);

  const sync = await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: dailyRequest() });
  expect(sync.statusCode).toBe(200);
}, 120_000);

test('with a Temporal that takes connections but never answers, job operations are 503 once the call deadline passes', async () => {
  // A stopped server (SIGSTOP) or an overloaded one: the TCP connection opens, no gRPC answer comes.
  const silent = net.createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const mute = Connection.lazy({ address });
  const jobs = new JobService(new Client({ connection: mute }), store, engine, {
    taskQueue: 'no-worker',
    parallelism: 1,
    heartbeatTimeoutMs: 10_000,
    chunksPerRun: 10,
    temporalAnswerMs: 1_500,
  });
  const api = await testServer(config, undefined, jobs, engine);
  try {
    const before = (await store.list()).map((meta) => meta.job_id);
    const started = Date.now();
    const answers = await Promise.all([
      api.inject({ method: 'POST', url: '/forecast-jobs?model=naive', headers: AUTH, payload: dailyRequest() }),
      api.inject({ method: 'GET', url: `/forecast-jobs/${before[0]}`, headers: AUTH }),
    ]);
    expect(Date.now() - started).toBeLessThan(30_000);
    for (const res of answers) {
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ code: 'scheduler_unavailable', detail: expect.stringMatching(/\(DEADLINE_EXCEEDED\);/) });
    }
    // The refused submission left nothing behind.
    expect((await store.list()).map((meta) => meta.job_id)).toEqual(before);
  } finally {
    await api.close();
    await mute.close();
    silent.close();
  }
}, 60_000);
