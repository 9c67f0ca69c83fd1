import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../config.ts';
import { AUTH, testConfig, testServer } from '../api/helpers.ts';
import { filePart, multipartBody, queryPart, RETAIL, retailQuery, tempDir, writeParquet, type Part } from '../beta/helpers.ts';
import { startJobsStack, until, type JobsStack } from './temporal-env.ts';

/**
 * Beta backtests as jobs, on a real Temporal dev server: the synchronous endpoint's body in, the
 * same numbers out as Parquet with typed, named columns; the same refusals; nothing left behind.
 */

const MAX_UPLOAD = 200_000;
const config = testConfig({ beta: { ...loadConfig().beta, maxUploadBytes: MAX_UPLOAD } });
const dir = tempDir('beta-jobs-');
let stack: JobsStack;
let app: FastifyInstance;
let sales: string;
let gappy: string;

beforeAll(async () => {
  stack = await startJobsStack(config, 'beta-jobs-test', 4);
  ({ app } = stack);
  sales = await writeParquet(path.join(dir, 'sales.parquet'), RETAIL);
  // Store b has no row on day 5: a gap the query does not say how to fill.
  gappy = await writeParquet(path.join(dir, 'gappy.parquet'), `SELECT * FROM (${RETAIL}) WHERE NOT (store = 'b' AND ts = TIMESTAMP '2024-01-06')`);
}, 120_000);

afterAll(() => stack?.stop());

const BOB = { authorization: 'Bearer test-key-bob' };
const backtestQuery = () => retailQuery({ cutoff: [{ every: '2d' }], quantiles: [0.1, 0.5, 0.9] });

function post(url: string, parts: Part[], headers: Record<string, string> = AUTH) {
  const body = multipartBody(parts);
  return app.inject({ method: 'POST', url, headers: { ...headers, ...body.headers }, payload: body.payload });
}

const submit = (parts: Part[], model = 'naive') => post(`/v1-beta/forecast-jobs?model=${model}`, parts);
const sync = (parts: Part[], model = 'naive') => post(`/v1-beta/forecast?model=${model}`, parts);

/** Each row of a job's predictions has exactly the mean of the same (time, cutoff, series) row of the synchronous answer's `data`. */
function expectMeansAsSync(predictions: Record<string, unknown>[], data: Record<string, any>): void {
  for (const row of predictions) {
    const i = data.time.findIndex(
      (t: string, j: number) =>
        t === row.time_text && data.cutoff[j] === row.cutoff_text && data.identifiers.store[j] === row.store && data.identifiers.sku[j] === row.sku,
    );
    expect(row.mean).toBe(data.targets.sales.quantiles.mean[i]);
  }
}

async function poll(id: string): Promise<Record<string, any>> {
  return until(
    async () => {
      const res = await app.inject({ method: 'GET', url: `/v1-beta/forecast-jobs/${id}`, headers: AUTH });
      return res.json().status !== 'in_progress' && res.json();
    },
    60_000,
    `beta job ${id}`,
  );
}

/** A downloaded Parquet file's columns (name and DuckDB type) and rows, read by DuckDB. */
async function readDownload(url: string): Promise<{ columns: [string, string][]; rows: Record<string, unknown>[] }> {
  const res = await app.inject({ method: 'GET', url, headers: AUTH });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toBe('application/vnd.apache.parquet');
  const file = path.join(dir, `download-${Math.random().toString(36).slice(2)}.parquet`);
  fs.writeFileSync(file, res.rawPayload);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const columns = (await c.runAndReadAll(`DESCRIBE SELECT * FROM '${file}'`)).getRowsJS().map((r) => [String(r[0]), String(r[1])] as [string, string]);
    const rows = (
      await c.runAndReadAll(
        `SELECT * EXCLUDE (cutoff${columns.some((col) => col[0] === 'time') ? ', "time"' : ''}), strftime(cutoff, '%Y-%m-%dT%H:%M:%SZ') AS cutoff_text${columns.some((col) => col[0] === 'time') ? `, strftime("time", '%Y-%m-%dT%H:%M:%SZ') AS time_text` : ''} FROM '${file}'`,
      )
    ).getRowObjectsJS();
    return { columns, rows };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describe('a beta backtest job', () => {
  let id: string;
  let done: Record<string, unknown>;
  beforeAll(async () => {
    const res = await submit([queryPart(backtestQuery()), filePart('sales', sales)]);
    expect(res.statusCode).toBe(200);
    id = res.json().job_id;
    expect(res.json()).toEqual({ job_id: id, call_id: id, status: 'in_progress' });
    done = await poll(id);
  });

  test('completes, and says where its results are', () => {
    expect(done).toMatchObject({
      job_id: id,
      status: 'completed',
      model: 'naive',
      results: { predictions: `/v1-beta/forecast-jobs/${id}/predictions.parquet`, metrics: `/v1-beta/forecast-jobs/${id}/metrics.parquet` },
    });
  });

  test('a poll or a download with query parameters it does not take is refused, not answered as without them', async () => {
    for (const url of [`/v1-beta/forecast-jobs/${id}?limit=0`, `/v1-beta/forecast-jobs/${id}/metrics.parquet?foo=1`]) {
      const res = await app.inject({ method: 'GET', url, headers: AUTH });
      expect(res.statusCode, url).toBe(422);
      expect(res.json().errors[0].path).toMatch(/^query\.(limit|foo)$/);
    }
  });

  test('predictions are typed columns named as in the query, with exactly the numbers of POST /v1-beta/forecast', async () => {
    const { columns, rows } = await readDownload(`/v1-beta/forecast-jobs/${id}/predictions.parquet`);
    expect(columns).toEqual([
      ['store', 'VARCHAR'],
      ['sku', 'VARCHAR'],
      ['cutoff', 'TIMESTAMP'],
      ['time', 'TIMESTAMP'],
      ['target', 'VARCHAR'],
      ['step', 'INTEGER'],
      ['model', 'VARCHAR'],
      ['mean', 'DOUBLE'],
      ['q_0_1', 'DOUBLE'],
      ['q_0_5', 'DOUBLE'],
      ['q_0_9', 'DOUBLE'],
      ['actual', 'DOUBLE'],
      // The download merges the job's parts, and names the job as their hive partition does.
      ['job_id', 'VARCHAR'],
    ]);
    const body = (await sync([queryPart(backtestQuery()), filePart('sales', sales)])).json();
    const { data } = body;
    const key = (store: unknown, sku: unknown, cutoff: unknown, time: unknown) => `${store}|${sku}|${cutoff}|${time}`;
    const expected = new Map(
      data.time.map((time: string, i: number) => [
        key(data.identifiers.store[i], data.identifiers.sku[i], data.cutoff[i], time),
        { mean: data.targets.sales.quantiles.mean[i], q: data.targets.sales.quantiles['0.1'][i], actual: data.targets.sales.actual[i] },
      ]),
    );
    expect(rows.length).toBe(expected.size);
    expect(new Set(rows.map((r) => key(r.store, r.sku, r.cutoff_text, r.time_text))).size).toBe(rows.length);
    for (const row of rows) {
      expect(row.target).toBe('sales');
      expect(row.model).toBe('naive');
      const want = expected.get(key(row.store, row.sku, row.cutoff_text, row.time_text));
      expect(want).toBeDefined();
      expect({ mean: row.mean, q: row.q_0_1, actual: row.actual }).toEqual(want);
    }
  });

  test('metrics: one row per (series, cutoff), scored as the synchronous endpoint scores them', async () => {
    const { columns, rows } = await readDownload(`/v1-beta/forecast-jobs/${id}/metrics.parquet`);
    expect(columns.map((c) => c[0])).toEqual([
      'store',
      'sku',
      'cutoff',
      'target',
      'model',
      'known_steps',
      'mae',
      'mape',
      'crps',
      'wape',
      'scaled_bias',
      'refitted',
      'job_id',
    ]);
    // Without a refit policy every cutoff is refitted.
    expect(rows.every((r) => r.refitted === true)).toBe(true);
    const { metrics } = (await sync([queryPart(backtestQuery()), filePart('sales', sales)])).json();
    const known = rows.filter((r) => (r.known_steps as number) > 0);
    expect(known.length).toBe(metrics.cutoff.length);
    for (const row of known) {
      const i = metrics.cutoff.findIndex(
        (cutoff: string, j: number) => cutoff === row.cutoff_text && metrics.identifiers.store[j] === row.store && metrics.identifiers.sku[j] === row.sku,
      );
      expect(i).toBeGreaterThanOrEqual(0);
      expect(row.mae).toBe(metrics.targets.sales.mae[i]);
      expect(row.crps).toBe(metrics.targets.sales.crps[i]);
    }
  });

  test('a refit policy: the job keeps fits between cutoffs as the synchronous endpoint does, and says which were refitted', async () => {
    const query = retailQuery({ cutoff: [{ every: '1d' }], quantiles: [0.1, 0.9], refit: 2 });
    const res = await submit([queryPart(query), filePart('sales', sales)], 'theta');
    expect(res.statusCode).toBe(200);
    const job = res.json().job_id;
    expect((await poll(job)).status).toBe('completed');
    const { data } = (await sync([queryPart(query), filePart('sales', sales)], 'theta')).json();
    expect(data.refitted).toContain(false);
    const { rows } = await readDownload(`/v1-beta/forecast-jobs/${job}/metrics.parquet`);
    for (const row of rows) {
      const i = data.cutoff.findIndex(
        (c: string, j: number) => c === row.cutoff_text && data.identifiers.store[j] === row.store && data.identifiers.sku[j] === row.sku,
      );
      expect(row.refitted).toBe(data.refitted[i]);
    }
    const predictions = (await readDownload(`/v1-beta/forecast-jobs/${job}/predictions.parquet`)).rows;
    expectMeansAsSync(predictions, data);
  });

  test('model_config (beyond the reference): the job forecasts with it exactly as the synchronous endpoint does', async () => {
    const query = retailQuery({ cutoff: [{ every: '2d' }], model_config: { model: 'aets', config: { season_length: 2, estimation: 'r' } } });
    const res = await submit([queryPart(query), filePart('sales', sales)], 'aets');
    expect(res.statusCode).toBe(200);
    const job = res.json().job_id;
    expect((await poll(job)).status).toBe('completed');
    const { data } = (await sync([queryPart(query), filePart('sales', sales)], 'aets')).json();
    const byDefault = (await sync([queryPart(retailQuery({ cutoff: [{ every: '2d' }] })), filePart('sales', sales)], 'aets')).json().data;
    expect(data.targets.sales.quantiles.mean).not.toEqual(byDefault.targets.sales.quantiles.mean);
    const predictions = (await readDownload(`/v1-beta/forecast-jobs/${job}/predictions.parquet`)).rows;
    expect(predictions).toHaveLength(data.time.length);
    expectMeansAsSync(predictions, data);
  });

  test('a model that learns across series (svc-global) sees every series in one chunk: the job equals the synchronous answer', async () => {
    const query = backtestQuery();
    const res = await submit([queryPart(query), filePart('sales', sales)], 'svc-global');
    expect(res.statusCode).toBe(200);
    const job = res.json().job_id;
    expect((await poll(job)).status).toBe('completed');
    const { data } = (await sync([queryPart(query), filePart('sales', sales)], 'svc-global')).json();
    const predictions = (await readDownload(`/v1-beta/forecast-jobs/${job}/predictions.parquet`)).rows;
    expect(predictions).toHaveLength(data.time.length);
    expectMeansAsSync(predictions, data);
  });

  test('is listed beside forecast jobs, and only under its own prefix', async () => {
    const list = (await app.inject({ method: 'GET', url: '/forecast-jobs', headers: AUTH })).json();
    expect(list.jobs.find((j: { job_id: string }) => j.job_id === id)).toMatchObject({ kind: 'beta', model: 'naive', status: 'completed', series: null });
    const stable = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH });
    expect(stable.statusCode).toBe(404);
    expect(stable.json().detail).toContain(`/v1-beta/forecast-jobs/${id}`);
    expect((await app.inject({ method: 'GET', url: `/v1-beta/forecast-jobs/${id}`, headers: BOB })).statusCode).toBe(403);
    expect((await app.inject({ method: 'GET', url: `/v1-beta/forecast-jobs/${id}`, headers: {} })).statusCode).toBe(401);
    const unknown = await app.inject({ method: 'GET', url: '/v1-beta/forecast-jobs/00000000-0000-4000-8000-000000000000', headers: AUTH });
    expect(unknown.statusCode).toBe(404);
    const cancel = await app.inject({ method: 'POST', url: `/v1-beta/forecast-jobs/${id}/cancel`, headers: AUTH });
    expect(cancel.statusCode).toBe(409);
  });
});

describe('bad input', () => {
  const jobsDir = () => path.join(config.dataDir, 'jobs');
  const jobCount = () => (fs.existsSync(jobsDir()) ? fs.readdirSync(jobsDir()).length : 0);

  test.each([
    ['no query part', () => [filePart('sales', sales)]],
    ['a part the query does not read', () => [queryPart(retailQuery()), filePart('sales', sales), filePart('other', sales)]],
    [
      'a role naming a column the file lacks',
      () => [
        queryPart(retailQuery({}, { columns: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', units: 'target' } })),
        filePart('sales', sales),
      ],
    ],
    ['a part that is not Parquet or Arrow', () => [queryPart(retailQuery()), { name: 'sales', data: 'a,b\n1,2\n', filename: 'sales.csv' }]],
    ['a quantile out of range', () => [queryPart(retailQuery({ quantiles: [1.5] })), filePart('sales', sales)]],
  ])("%s: the synchronous endpoint's problem, before a job exists", async (_name, parts) => {
    const before = jobCount();
    const job = await submit(parts());
    const direct = await sync(parts());
    expect(job.statusCode).toBeGreaterThanOrEqual(400);
    expect(job.statusCode).toBe(direct.statusCode);
    expect(job.headers['content-type']).toContain('application/problem+json');
    expect(job.json()).toEqual(direct.json());
    expect(jobCount()).toBe(before);
  });

  test('an identifier named like a result column is refused with its field', async () => {
    const query = retailQuery();
    const renamed = await writeParquet(path.join(dir, 'renamed.parquet'), `SELECT ts, store AS target, sku, sales FROM (${RETAIL})`);
    const res = await submit([
      queryPart({
        ...query,
        input: {
          ...query.input,
          columns: { ts: { kind: 'time', frequency: '1d' }, target: 'identifier', sku: 'identifier', sales: { kind: 'target', aggregate: 'sum' } },
        },
      }),
      filePart('sales', renamed),
    ]);
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: 'body.query.input.columns.target', message: expect.stringContaining('result column') }]);
  });

  test('a gap found while preparing fails the job with the code and message the synchronous endpoint answers', async () => {
    const parts = () => [queryPart(backtestQuery()), filePart('sales', gappy)];
    const direct = (await sync(parts())).json();
    const res = await submit(parts());
    expect(res.statusCode).toBe(200);
    const failed = await poll(res.json().job_id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual({ code: direct.code, message: direct.detail });
  });

  test('an upload over the limit is 413, and leaves no job, no upload and no stored part behind', async () => {
    const before = jobCount();
    const big = { name: 'sales', data: Buffer.alloc(MAX_UPLOAD + 10_000, 7), filename: 'big.parquet', contentType: 'application/octet-stream' };
    const res = await submit([queryPart(retailQuery()), big]);
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
    expect(jobCount()).toBe(before);
    const uploads = path.join(config.dataDir, 'beta-uploads');
    expect(fs.existsSync(uploads) ? fs.readdirSync(uploads) : []).toEqual([]);
  });
});

test('a job of many chunks continues as new: every run keeps a short history, and every (series, cutoff) is written once', async () => {
  // 4 series x 6 cutoffs, at least 2 forecasts per chunk (the stack's workers): 4 chunks, 1 per run.
  const queue = 'beta-jobs-history';
  const api = await testServer(config, undefined, stack.jobService(queue, 2, 1), stack.engine);
  const worker = await stack.worker(queue);
  try {
    const body = multipartBody([queryPart(backtestQuery()), filePart('sales', sales)]);
    const res = await api.inject({ method: 'POST', url: '/v1-beta/forecast-jobs?model=naive', headers: { ...AUTH, ...body.headers }, payload: body.payload });
    const id = res.json().job_id;
    const done = await worker.runUntil(
      until(
        async () => {
          const state = (await api.inject({ method: 'GET', url: `/v1-beta/forecast-jobs/${id}`, headers: AUTH })).json();
          return state.status !== 'in_progress' && state;
        },
        60_000,
        'the job',
      ),
    );
    expect(done.status).toBe('completed');
    const runs: number[] = [];
    for await (const run of stack.env.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
      runs.push((await stack.env.client.workflow.getHandle(id, run.runId).fetchHistory()).events?.length ?? 0);
    }
    expect(runs).toHaveLength(4);
    for (const events of runs) expect(events).toBeLessThanOrEqual(30);
    const counts = await countChunks(id);
    expect(counts).toEqual({ chunks: 4, pairs: 24, distinctPairs: 24 });
  } finally {
    await api.close();
  }
});

async function countChunks(jobId: string) {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const base = path.join(config.dataDir, 'results', `job_id=${jobId}`);
    const chunks = fs.readdirSync(path.join(base, 'metrics')).length;
    const [row] = (
      await c.runAndReadAll(`SELECT count(*)::INTEGER, count(DISTINCT (store, sku, cutoff))::INTEGER FROM read_parquet('${base}/metrics/*.parquet')`)
    ).getRows();
    return { chunks, pairs: row[0] as number, distinctPairs: row[1] as number };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

test('DELETE a beta job: 403 for another principal, then gone (404), as for forecast jobs', async () => {
  const res = await submit([queryPart(backtestQuery()), filePart('sales', sales)]);
  const id = res.json().job_id;
  expect((await poll(id)).status).toBe('completed');
  const url = `/v1-beta/forecast-jobs/${id}`;
  expect((await app.inject({ method: 'DELETE', url, headers: BOB })).statusCode).toBe(403);
  const deleted = await app.inject({ method: 'DELETE', url, headers: AUTH });
  expect(deleted.json()).toEqual({ job_id: id, status: 'deleted' });
  expect((await app.inject({ method: 'GET', url, headers: AUTH })).statusCode).toBe(404);
  expect((await app.inject({ method: 'GET', url: `${url}/metrics.parquet`, headers: AUTH })).statusCode).toBe(404);
});
