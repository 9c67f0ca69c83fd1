import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../config.ts';
import { AUTH, dailyRequest, testConfig, testServer } from '../api/helpers.ts';
import { filePart, multipartBody, queryPart, RETAIL, retailQuery, tempDir, writeParquet, type Part } from '../beta/helpers.ts';
import { startJobsStack, until, type JobsStack } from './temporal-env.ts';

/**
 * Idempotency-Key on job submissions, stable and beta, on a real Temporal dev server: the same key
 * and request answer the same job and start no second workflow; another request with the key is
 * 422; a key expires; concurrent requests with one key create one job. Across API processes and
 * restarts: idempotency-restart.test.ts.
 */

const config = testConfig({
  quotas: { defaults: { ...loadConfig({}).quotas.defaults, forecastsPerJob: 40 }, byPrincipal: {} },
});
const dir = tempDir('idempotency-');
const BOB = { authorization: 'Bearer test-key-bob' };
let stack: JobsStack;
let app: FastifyInstance;
let sales: string;
let other: string;

beforeAll(async () => {
  stack = await startJobsStack(config, 'idempotency-test', 2);
  ({ app } = stack);
  sales = await writeParquet(path.join(dir, 'sales.parquet'), RETAIL);
  other = await writeParquet(path.join(dir, 'other.parquet'), `SELECT ts, store, sku, sales + 1 AS sales FROM (${RETAIL})`);
}, 120_000);

afterAll(() => stack?.stop());

let keys = 0;
/** A key no other test uses. */
const freshKey = () => `key-${process.pid}-${++keys}-${Math.random().toString(36).slice(2)}`;

const submit = (key: string | undefined, body: unknown = dailyRequest(), { headers = AUTH, url = '/forecast-jobs?model=naive', server = app } = {}) =>
  server.inject({ method: 'POST', url, headers: { ...headers, ...(key !== undefined && { 'idempotency-key': key }) }, payload: body as object });

function submitBeta(key: string, parts: Part[], model = 'naive') {
  const body = multipartBody(parts);
  return app.inject({
    method: 'POST',
    url: `/v1-beta/forecast-jobs?model=${model}`,
    headers: { ...AUTH, 'idempotency-key': key, ...body.headers },
    payload: body.payload,
  });
}

/** Ids of the jobs in the store, and of the workflows Temporal has on the test's queue. */
async function jobIds(): Promise<string[]> {
  return (await stack.store.list()).map((m) => m.job_id).sort();
}

async function workflowIds(): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of stack.env.client.workflow.list({ query: `TaskQueue = 'idempotency-test'` })) ids.push(wf.workflowId);
  return [...new Set(ids)].sort();
}

/** Waits until Temporal's visibility lists every stored job (it may lag a start by a moment), then checks they match. */
async function expectOneWorkflowPerJob(): Promise<void> {
  const jobs = await jobIds();
  await until(async () => (await workflowIds()).length >= jobs.length, 10_000, 'the workflows to be listed');
  expect(await workflowIds()).toEqual(jobs);
}

describe('stable job submissions', () => {
  test('the same key and body answer the same job, marked as replayed, and start no second workflow', async () => {
    const key = freshKey();
    const first = await submit(key);
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const before = await jobIds();
    const again = await submit(key);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The same document with its keys in another order, under the earlier variant's prefix, as a quoted key: the same request.
    const reordered = Object.fromEntries(Object.entries(dailyRequest()).reverse());
    const same = await submit(`"${key}"`, reordered, { url: '/backtest-jobs?model=naive' });
    expect(same.json().job_id).toBe(first.json().job_id);
    expect(await jobIds()).toEqual(before);
    await expectOneWorkflowPerJob();
  });

  test('the same key with another body, model or option is 422 naming the header; nothing is started', async () => {
    const key = freshKey();
    const first = await submit(key);
    const before = await jobIds();
    for (const [body, url] of [
      [dailyRequest({ horizon: 4 }), '/forecast-jobs?model=naive'],
      [dailyRequest(), '/forecast-jobs?model=aets'],
      [dailyRequest(), '/forecast-jobs?model=naive&region=eu'],
    ] as const) {
      const res = await submit(key, body, { url });
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'idempotency_key_reused', errors: [{ path: 'header.Idempotency-Key' }] });
      expect(res.json().detail).toContain(first.json().job_id);
    }
    expect(await jobIds()).toEqual(before);
  });

  test("keys are per principal: another principal's same key is its own", async () => {
    const key = freshKey();
    const alice = (await submit(key)).json().job_id;
    const bob = await submit(key, dailyRequest(), { headers: BOB });
    expect(bob.statusCode).toBe(200);
    expect(bob.json().job_id).not.toBe(alice);
    expect((await submit(key, dailyRequest(), { headers: BOB })).json().job_id).toBe(bob.json().job_id);
  });

  test('without a key every submission is a new job', async () => {
    const [a, b] = [await submit(undefined), await submit(undefined)];
    expect(a.json().job_id).not.toBe(b.json().job_id);
  });

  test('concurrent requests with one key create one job: the others answer it, or 409 while it is being created', async () => {
    const key = freshKey();
    const before = await jobIds();
    const answers = await Promise.all(Array.from({ length: 6 }, () => submit(key)));
    const ids = new Set(answers.filter((r) => r.statusCode === 200).map((r) => r.json().job_id));
    expect(ids.size).toBe(1);
    for (const res of answers.filter((r) => r.statusCode !== 200)) {
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('idempotency_key_in_use');
      expect(res.headers['retry-after']).toBe('1');
    }
    expect((await jobIds()).filter((id) => !before.includes(id))).toEqual([...ids]);
    // Once created, a retry answers it.
    expect((await submit(key)).json().job_id).toBe([...ids][0]);
    await expectOneWorkflowPerJob();
  });

  test('a submission refused (a quota, an invalid body) leaves the key free for the corrected request', async () => {
    const key = freshKey();
    const invalid = await submit(key, dailyRequest({ horizon: 0 }));
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json().code).toBe('invalid_request');
    const big = { ...dailyRequest(), series: Array.from({ length: 5 }, () => dailyRequest({}, { fcds: [2, 3, 4, 5, 6, 7, 8, 9, 10] }).series[0]) };
    const refused = await submit(key, big);
    expect(refused.statusCode).toBe(413);
    expect(refused.json().limit).toEqual({ name: 'forecasts_per_job', value: 40 });
    const accepted = await submit(key);
    expect(accepted.statusCode).toBe(200);
    expect(accepted.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('expiry', () => {
  let shortLived: FastifyInstance;
  beforeAll(async () => {
    // A second API on the same store and Temporal, remembering keys for 1 s (IDEMPOTENCY_KEY_TTL=1s).
    shortLived = await testServer({ ...config, idempotencyKeyTtlMs: 1_000 }, undefined, stack.jobService('idempotency-test', 2), stack.engine);
  });
  afterAll(() => shortLived?.close());

  test('once a key has expired it is new again: the same request starts a new job, another request is taken', async () => {
    const key = freshKey();
    const first = (await submit(key, dailyRequest(), { server: shortLived })).json().job_id;
    expect((await submit(key, dailyRequest(), { server: shortLived })).json().job_id).toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const second = await submit(key, dailyRequest(), { server: shortLived });
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json().job_id).not.toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const other = await submit(key, dailyRequest({ horizon: 2 }), { server: shortLived });
    expect(other.statusCode).toBe(200);
    expect(other.json().job_id).not.toBe(second.json().job_id);
    await expectOneWorkflowPerJob();
  });

  test('expired records are removed from the store after a grace period', async () => {
    const key = freshKey();
    await submit(key, dailyRequest(), { server: shortLived });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await stack.store.idempotency.read('alice', key)).not.toBeNull();
    // Nothing expired before now minus the grace: this sweep keeps it; one an hour later removes it.
    await stack.store.idempotency.removeExpired(Date.now() - 3_600_000);
    expect(await stack.store.idempotency.read('alice', key)).not.toBeNull();
    expect(await stack.store.idempotency.removeExpired(Date.now())).toBeGreaterThanOrEqual(1);
    expect(await stack.store.idempotency.read('alice', key)).toBeNull();
    expect(fs.readdirSync(path.join(config.dataDir, 'idempotency')).every((name) => !name.includes('.tmp-'))).toBe(true);
  });
});

describe('beta job submissions', () => {
  test('the same key and upload answer the same job, whatever the order of the parts', async () => {
    const key = freshKey();
    const query = queryPart(retailQuery({ cutoff: [{ every: '2d' }] }));
    const first = await submitBeta(key, [query, filePart('sales', sales)]);
    expect(first.statusCode).toBe(200);
    const before = await jobIds();
    const again = await submitBeta(key, [filePart('sales', sales), query]);
    expect(again.statusCode).toBe(200);
    expect(again.json().job_id).toBe(first.json().job_id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await jobIds()).toEqual(before);
    await expectOneWorkflowPerJob();
  });

  test('other bytes under the same part name, another query or model are 422; the upload is removed', async () => {
    const key = freshKey();
    const query = queryPart(retailQuery({ cutoff: [{ every: '2d' }] }));
    await submitBeta(key, [query, filePart('sales', sales)]);
    const before = await jobIds();
    for (const res of [
      await submitBeta(key, [query, filePart('sales', other)]),
      await submitBeta(key, [queryPart(retailQuery({ cutoff: [{ every: '3d' }] })), filePart('sales', sales)]),
      await submitBeta(key, [query, filePart('sales', sales)], 'aets'),
    ]) {
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: 'idempotency_key_reused', errors: [{ path: 'header.Idempotency-Key' }] });
    }
    expect(await jobIds()).toEqual(before);
    expect(fs.readdirSync(path.join(config.dataDir, 'beta-uploads'))).toEqual([]);
  });

  test('a key used for a stable job is another request for a beta job (422)', async () => {
    const key = freshKey();
    await submit(key);
    const res = await submitBeta(key, [queryPart(retailQuery()), filePart('sales', sales)]);
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('idempotency_key_reused');
  });
});

// Last: a deleted job's workflow stays listed in Temporal, which the one-workflow-per-job checks above count.
describe('deleted jobs', () => {
  test('a deleted job frees its key: the same request then starts a new job, which exists', async () => {
    const key = freshKey();
    const first = (await submit(key)).json().job_id as string;
    const deleted = await app.inject({ method: 'DELETE', url: `/forecast-jobs/${first}`, headers: AUTH });
    expect(deleted.statusCode).toBeLessThan(300);
    const again = await submit(key);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const second = again.json().job_id as string;
    expect(second).not.toBe(first);
    expect((await app.inject({ method: 'GET', url: `/forecast-jobs/${second}`, headers: AUTH })).statusCode).toBe(200);
    expect((await submit(key)).json().job_id).toBe(second);
  });
});
