import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AUTH, testConfig, testServer } from '../api/helpers.ts';
import { filePart, multipartBody, queryPart, tempDir, writeParquet, type Part } from '../beta/helpers.ts';
import { GROUPED, groupedInput, incoherence, TREE, treeQuery } from '../beta/hierarchy-data.ts';
import { startJobsStack, until, type JobsStack } from './temporal-env.ts';

/**
 * Reconciliation in beta jobs, on a real Temporal dev server: chunks write base forecasts, one
 * activity per cutoff reconciles them, and the job's Parquet holds exactly the synchronous
 * answer's numbers, coherent, with the level and the base mean of every row.
 */

const config = testConfig();
const dir = tempDir('beta-reconciliation-jobs-');
let stack: JobsStack;
let app: FastifyInstance;
let tree: string;
let grouped: string;

beforeAll(async () => {
  stack = await startJobsStack(config, 'beta-reconciliation-test', 4);
  ({ app } = stack);
  tree = await writeParquet(path.join(dir, 'tree.parquet'), TREE);
  grouped = await writeParquet(path.join(dir, 'grouped.parquet'), GROUPED);
}, 120_000);

afterAll(() => stack?.stop());

const IDS = ['region', 'store', 'sku'];

function post(server: FastifyInstance, url: string, parts: Part[]) {
  const body = multipartBody(parts);
  return server.inject({ method: 'POST', url, headers: { ...AUTH, ...body.headers }, payload: body.payload });
}

async function poll(server: FastifyInstance, id: string): Promise<Record<string, any>> {
  return until(
    async () => {
      const res = await server.inject({ method: 'GET', url: `/v1-beta/forecast-jobs/${id}`, headers: AUTH });
      return res.json().status !== 'in_progress' && res.json();
    },
    120_000,
    `beta job ${id}`,
  );
}

/** A downloaded Parquet file's column names and rows, times as text. */
async function readDownload(server: FastifyInstance, url: string): Promise<{ columns: string[]; rows: Record<string, any>[] }> {
  const res = await server.inject({ method: 'GET', url, headers: AUTH });
  expect(res.statusCode).toBe(200);
  const file = path.join(dir, `download-${Math.random().toString(36).slice(2)}.parquet`);
  fs.writeFileSync(file, res.rawPayload);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const columns = (await c.runAndReadAll(`DESCRIBE SELECT * FROM '${file}'`)).getRowsJS().map((r) => String(r[0]));
    const time = columns.includes('time') ? `, strftime("time", '%Y-%m-%dT%H:%M:%SZ') AS time_text` : '';
    const sql = `SELECT *, strftime(cutoff, '%Y-%m-%dT%H:%M:%SZ') AS cutoff_text${time} FROM '${file}'`;
    return { columns, rows: (await c.runAndReadAll(sql)).getRowObjectsJS() };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** Runs the query as a job on `server` and synchronously; both answers. */
async function jobAndSync(server: FastifyInstance, query: unknown, model = 'aets') {
  const parts = () => [queryPart(query), filePart('sales', tree)];
  const res = await post(server, `/v1-beta/forecast-jobs?model=${model}`, parts());
  expect(res.statusCode, res.body).toBe(200);
  const id = res.json().job_id;
  const done = await poll(server, id);
  expect(done.status, JSON.stringify(done.error)).toBe('completed');
  const sync = (await post(app, `/v1-beta/forecast?model=${model}`, parts())).json();
  return { id, sync };
}

/** Every prediction row is the synchronous answer's row of the same series, cutoff and time, to the bit. */
function expectRowsAsSync(rows: Record<string, any>[], data: Record<string, any>): void {
  const key = (ids: unknown[], cutoff: unknown, time: unknown) => JSON.stringify([...ids, cutoff, time]);
  const index = new Map<string, number>(
    data.time.map((t: string, i: number) => [
      key(
        IDS.map((name) => data.identifiers[name][i]),
        data.cutoff[i],
        t,
      ),
      i,
    ]),
  );
  expect(rows).toHaveLength(data.time.length);
  const units = data.targets.units;
  for (const row of rows) {
    const i = index.get(
      key(
        IDS.map((name) => row[name]),
        row.cutoff_text,
        row.time_text,
      ),
    )!;
    expect(i).toBeDefined();
    expect({ level: row.level, mean: row.mean, base: row.base_mean, q1: row.q_0_1, q9: row.q_0_9, actual: row.actual }).toEqual({
      level: data.level[i],
      mean: units.quantiles.mean[i],
      base: units.base_mean[i],
      q1: units.quantiles['0.1'][i],
      q9: units.quantiles['0.9'][i],
      actual: units.actual[i],
    });
  }
}

const meanRows = (rows: Record<string, any>[]) => rows.map((r) => ({ ids: IDS.map((name) => r[name]), at: `${r.cutoff_text}|${r.time_text}`, mean: r.mean }));

describe.each([
  ['min_trace mint_shrink (one-step residuals from the chunks)', { method: 'min_trace', estimator: 'mint_shrink' }],
  ['top_down by historical proportions (the history read back per cutoff)', { method: 'top_down', proportions: 'average_proportions' }],
])('a reconciling job: %s', (_name, reconciliation) => {
  let id: string;
  let sync: Record<string, any>;
  beforeAll(async () => {
    ({ id, sync } = await jobAndSync(app, treeQuery({ reconciliation })));
  }, 180_000);

  test('its predictions are the synchronous answer, coherent, with level and base_mean columns', async () => {
    const { columns, rows } = await readDownload(app, `/v1-beta/forecast-jobs/${id}/predictions.parquet`);
    expect(columns).toEqual([...IDS, 'level', 'cutoff', 'time', 'target', 'step', 'model', 'mean', 'base_mean', 'q_0_1', 'q_0_9', 'actual', 'job_id']);
    expectRowsAsSync(rows, sync.data);
    const { worst, aggregates } = incoherence(meanRows(rows));
    expect(aggregates).toBe(6 * 14);
    expect(worst).toBeLessThan(1e-9);
  });

  test('its metrics score the reconciled forecasts as the synchronous answer does', async () => {
    const { columns, rows } = await readDownload(app, `/v1-beta/forecast-jobs/${id}/metrics.parquet`);
    expect(columns.slice(0, 5)).toEqual([...IDS, 'level', 'cutoff']);
    expect(rows).toHaveLength(18 * 2);
    const { metrics } = sync;
    for (const row of rows) {
      const i = metrics.cutoff.findIndex((c: string, j: number) => c === row.cutoff_text && IDS.every((name) => metrics.identifiers[name][j] === row[name]));
      const units = metrics.targets.units;
      expect({ level: row.level, mae: row.mae, crps: row.crps }).toEqual({ level: metrics.level[i], mae: units.mae[i], crps: units.crps[i] });
    }
  });
});

test('a job whose cutoffs outlast a run continues as new between them, and writes each cutoff once', async () => {
  // One activity per run: every chunk, then each cutoff, in a run of its own.
  const queue = 'beta-reconciliation-history';
  const api = await testServer(config, undefined, stack.jobService(queue, 2, 1), stack.engine);
  const worker = await stack.worker(queue);
  try {
    const query = treeQuery({ reconciliation: { method: 'min_trace', estimator: 'wls_var' } });
    const { id, sync } = await worker.runUntil(jobAndSync(api, query));
    const { rows } = await readDownload(api, `/v1-beta/forecast-jobs/${id}/predictions.parquet`);
    expectRowsAsSync(rows, sync.data);
    const parts = fs.readdirSync(path.join(config.dataDir, 'results', `job_id=${id}`, 'predictions'));
    expect(parts).toEqual(['part-00000.parquet', 'part-00001.parquet']);
    let runs = 0;
    for await (const _ of stack.env.client.workflow.list({ query: `WorkflowId = '${id}'` })) runs++;
    // 18 chunks of 2 forecasts, one run each; then one run per cutoff.
    expect(runs).toBe(18 + 2);
  } finally {
    await api.close();
  }
}, 300_000);

test('a grouped structure: top_down is refused before the job exists, min_trace runs', async () => {
  const query = (reconciliation: unknown) => treeQuery({ reconciliation }, groupedInput);
  const refused = await post(app, '/v1-beta/forecast-jobs?model=naive', [queryPart(query({ method: 'top_down' })), filePart('sales', grouped)]);
  expect(refused.statusCode).toBe(422);
  expect(refused.json().errors).toEqual([{ path: 'body.query.reconciliation.method', message: expect.stringMatching(/needs a tree/) }]);
  const res = await post(app, '/v1-beta/forecast-jobs?model=naive', [queryPart(query({ method: 'min_trace', estimator: 'ols' })), filePart('sales', grouped)]);
  const done = await poll(app, res.json().job_id);
  expect(done.status).toBe('completed');
  const { rows } = await readDownload(app, `/v1-beta/forecast-jobs/${done.job_id}/predictions.parquet`);
  const ids = ['region', 'store', 'category', 'sku'];
  const { worst, aggregates } = incoherence(rows.map((r) => ({ ids: ids.map((name) => r[name]), at: `${r.cutoff_text}|${r.time_text}`, mean: r.mean })));
  expect(aggregates).toBeGreaterThan(0);
  expect(worst).toBeLessThan(1e-9);
});
