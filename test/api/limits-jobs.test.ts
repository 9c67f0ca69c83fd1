import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { uploadsDir } from '../../api/beta/upload.ts';
import { JobService } from '../../api/jobs/job-service.ts';
import { loadConfig } from '../../config.ts';
import { Engine } from '../../engine/engine.ts';
import { JobStore } from '../../store/job-store.ts';
import { filePart, multipartBody, queryPart, RETAIL, retailQuery, tempDir, writeParquet } from '../beta/helpers.ts';
import { startTestTemporal, until } from '../jobs/temporal-env.ts';
import { AUTH, dailyRequest, KEY, testConfig, testServer } from './helpers.ts';

/**
 * The job quotas on a real Temporal dev server, with no worker on the task queue, so submitted
 * jobs stay in progress: concurrent jobs (429), series and forecasts (413), and malformed
 * Idempotency-Key headers (400). Every refusal leaves nothing behind: no workflow, no job in the
 * store, no upload.
 */

const QUEUE = 'limits-queued';
const BOB = { authorization: 'Bearer test-key-bob' };
const CAROL = { authorization: 'Bearer test-key-carol' };
const config = testConfig({
  envKeys: [
    { principal: 'alice', key: KEY },
    { principal: 'bob', key: 'test-key-bob' },
    { principal: 'carol', key: 'test-key-carol' },
  ],
  quotas: {
    defaults: { ...loadConfig({}).quotas.defaults, concurrentJobs: 2 },
    byPrincipal: { bob: { concurrentJobs: 0, seriesPerRequest: 3, forecastsPerJob: 6 }, carol: { concurrentJobs: 3 } },
  },
});
const dir = tempDir('limits-jobs-');

let env: TestWorkflowEnvironment;
let engine: Engine;
let store: JobStore;
let app: FastifyInstance;
let sales: string;

beforeAll(async () => {
  env = await startTestTemporal();
  engine = new Engine(config.engine);
  store = JobStore.local(config.dataDir);
  const jobs = new JobService(env.client, store, engine, { taskQueue: QUEUE, parallelism: 1, heartbeatTimeoutMs: 10_000, chunksPerRun: 10 });
  app = await testServer(config, undefined, jobs, engine);
  sales = await writeParquet(path.join(dir, 'sales.parquet'), RETAIL);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await engine?.close();
  store?.close();
  await env?.teardown();
});

const submit = (headers: Record<string, string> = AUTH, body: unknown = dailyRequest()) =>
  app.inject({ method: 'POST', url: '/forecast-jobs?model=naive', headers, payload: body as object });

function submitBeta(headers: Record<string, string> = AUTH) {
  const body = multipartBody([queryPart(retailQuery({ cutoff: [{ every: '2d' }] })), filePart('sales', sales)]);
  return app.inject({ method: 'POST', url: '/v1-beta/forecast-jobs?model=naive', headers: { ...headers, ...body.headers }, payload: body.payload });
}

/** The principal's jobs in the store, and the workflows on the queue: what a refusal must leave as it was. */
async function footprint(principal: string) {
  const jobs = (await store.list()).filter((m) => m.principal === principal).map((m) => m.job_id);
  const workflows: string[] = [];
  for await (const wf of env.client.workflow.list({ query: `TaskQueue = '${QUEUE}'` })) workflows.push(wf.workflowId);
  const uploads = fs.existsSync(uploadsDir(config.dataDir)) ? fs.readdirSync(uploadsDir(config.dataDir)) : [];
  return { jobs: jobs.sort(), workflows: workflows.filter((id) => jobs.includes(id)).sort(), uploads };
}

/** Waits until Temporal's visibility lists the principal's jobs (it may lag a start by a moment). */
const settled = (principal: string) =>
  until(
    async () => {
      const now = await footprint(principal);
      return now.workflows.length === now.jobs.length && now;
    },
    10_000,
    `${principal}'s workflows to be listed`,
  );

const inProgress = (principal: string) => store.activeJobs.list(principal);

describe('concurrent jobs', () => {
  test('at the quota a submission is 429 naming it, with Retry-After, and nothing is started', async () => {
    for (let i = 0; i < 2; i++) expect((await submit()).statusCode).toBe(200);
    const before = await settled('alice');
    expect(before.jobs).toHaveLength(2);

    const refused = await submit();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json()).toMatchObject({ status: 429, code: 'quota_exceeded', limit: { name: 'concurrent_jobs', value: 2 }, errors: null });
    expect(refused.json().detail).toMatch(/already has 2 jobs in progress/);
    // Beta jobs count towards the same quota, and their upload is removed too.
    const beta = await submitBeta();
    expect(beta.statusCode).toBe(429);
    expect(beta.json().limit).toEqual({ name: 'concurrent_jobs', value: 2 });

    expect(await footprint('alice')).toEqual(before);
    expect((await inProgress('alice')).sort()).toEqual(before.jobs);
  });

  test('quotas are per principal: an override of 0 is no limit', async () => {
    for (let i = 0; i < 3; i++) expect((await submit(BOB)).statusCode).toBe(200);
    expect((await submitBeta(BOB)).statusCode).toBe(200);
  });

  test('a job that ends frees its place', async () => {
    const [first] = (await footprint('alice')).jobs;
    await env.client.workflow.getHandle(first).terminate('the test frees a place');
    const res = await submit();
    expect(res.statusCode).toBe(200);
    // The ended job's entry was pruned when the places were counted.
    expect(await inProgress('alice')).not.toContain(first);
    expect(await inProgress('alice')).toContain(res.json().job_id);
    expect((await submit()).statusCode).toBe(429);
  });

  test('submissions racing for the places get exactly the quota: counting and taking a place is one step', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => submit(CAROL)));
    const accepted = answers.filter((r) => r.statusCode === 200);
    expect(accepted).toHaveLength(3);
    const refusals = answers.filter((r) => r.statusCode !== 200).map((r) => `${r.statusCode} ${r.json().code}`);
    expect(refusals).toEqual(Array(5).fill('429 quota_exceeded'));
    const after = await settled('carol');
    expect(after.jobs).toEqual(accepted.map((r) => r.json().job_id).sort());
    expect((await inProgress('carol')).sort()).toEqual(after.jobs);
  });
});

describe('series and forecasts per job', () => {
  const backtest = (series: number, fcds: number[]) => {
    const one = dailyRequest({}, { fcds }).series[0];
    return { ...dailyRequest(), series: Array.from({ length: series }, () => one) };
  };

  test('over either quota a job submission is 413 naming the quota and the field; nothing is stored or started', async () => {
    const before = await settled('bob');
    const forecasts = await submit(BOB, backtest(2, [4, 6, 8, 10]));
    expect(forecasts.statusCode).toBe(413);
    expect(forecasts.json()).toMatchObject({
      code: 'quota_exceeded',
      limit: { name: 'forecasts_per_job', value: 6 },
      errors: [{ path: 'body.series', message: 'over the forecasts_per_job quota of 6' }],
    });
    expect(forecasts.json().detail).toMatch(/the job would make 8 forecasts/);
    const series = await submit(BOB, backtest(4, [10]));
    expect(series.statusCode).toBe(413);
    expect(series.json()).toMatchObject({ code: 'quota_exceeded', limit: { name: 'series_per_request', value: 3 }, errors: [{ path: 'body.series' }] });
    expect(await footprint('bob')).toEqual(before);
    // At the quotas, the job is accepted.
    expect((await submit(BOB, backtest(2, [6, 8, 10]))).statusCode).toBe(200);
  });
});

describe('a malformed Idempotency-Key header', () => {
  const bad = ['', ' ', 'two words', 'a'.repeat(256), 'quote"inside', 'back\\slash', 'clé', '""'];

  test.each(bad)('%j is 400 naming the header, for stable and beta jobs, and nothing is started', async (value) => {
    const before = await settled('bob');
    for (const res of [await submit({ ...BOB, 'idempotency-key': value }), await submitBeta({ ...BOB, 'idempotency-key': value })]) {
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'invalid_idempotency_key', errors: [{ path: 'header.Idempotency-Key' }] });
      expect(res.json().detail).toMatch(/^the Idempotency-Key header /);
    }
    expect(await footprint('bob')).toEqual(before);
  });

  test('a repeated header is refused; a quoted key and one of 255 characters are taken', async () => {
    const twice = await app.inject({
      method: 'POST',
      url: '/forecast-jobs?model=naive',
      headers: { ...BOB, 'idempotency-key': ['one', 'two'] },
      payload: dailyRequest(),
    });
    expect(twice.statusCode).toBe(400);
    expect(twice.json().code).toBe('invalid_idempotency_key');
    for (const value of ['"quoted-key-1"', 'k'.repeat(255)]) expect((await submit({ ...BOB, 'idempotency-key': value })).statusCode).toBe(200);
  });
});

test('the limits are documented in /openapi on the operations they apply to', async () => {
  const doc = (await app.inject({ method: 'GET', url: '/openapi' })).json();
  for (const [path, media] of [
    ['/forecast-jobs', 'application/json'],
    ['/backtest-jobs', 'application/json'],
    ['/v1-beta/forecast-jobs', 'multipart/form-data'],
  ]) {
    const op = doc.paths[path].post;
    expect(op.requestBody.content[media]).toBeDefined();
    const header = op.parameters.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key');
    expect(header).toMatchObject({ schema: { type: 'string' } });
    // The pattern is the header's rule: 1 to 255 visible ASCII characters (no quote, no backslash), bare or quoted.
    const pattern = new RegExp(header.schema.pattern);
    for (const ok of ['a', 'x'.repeat(255), '"quoted-key"', '8e03978e-40d5-43e8-bc93-6894a57f9324']) expect(pattern.test(ok), ok).toBe(true);
    for (const bad of ['', 'x'.repeat(256), 'with space', 'back\\slash', '"unclosed']) expect(pattern.test(bad), bad).toBe(false);
    expect(header.required ?? false).toBe(false);
    for (const status of ['400', '409', '413', '422', '429']) expect(op.responses[status].content['application/problem+json']).toBeDefined();
    expect(op.responses['409'].headers['Retry-After']).toBeDefined();
    expect(op.responses['429'].headers['Retry-After']).toBeDefined();
    expect(op.responses['429'].description).toMatch(/concurrent_jobs/);
    expect(op.responses['422'].description).toMatch(/idempotency_key_reused/);
    expect(op.responses['400'].description).toMatch(/invalid_idempotency_key/);
    expect(op.responses['200'].headers['Idempotent-Replayed']).toBeDefined();
  }
  expect(doc.paths['/forecast-jobs'].post.responses['413'].description).toMatch(/forecasts_per_job/);
  expect(doc.paths['/forecast'].post.responses['413'].description).toMatch(/series_per_request/);
  expect(doc.paths['/forecast'].post.responses['429'].description).toMatch(/too_many_failed_authentications/);
  expect(doc.components.schemas.ProblemDetails.properties.limit).toBeDefined();
});
