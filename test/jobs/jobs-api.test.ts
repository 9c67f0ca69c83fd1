import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ForecastResponseSchema } from '../../engine/response-schema.ts';
import { AUTH, dailyRequest, hourlySeries, testConfig, testServer } from '../api/helpers.ts';
import { startJobsStack, until, type JobsStack } from './temporal-env.ts';

let stack: JobsStack;
let app: FastifyInstance;
const config = testConfig();

beforeAll(async () => {
  stack = await startJobsStack(config, 'jobs-api-test', 4);
  ({ app } = stack);
}, 120_000);

afterAll(() => stack?.stop());

const BOB = { authorization: 'Bearer test-key-bob' };

/** Three series, one of them context-only, backtested at several dates. */
const backtest = () => {
  const req = dailyRequest({ quantiles: [0.1, 0.5, 0.9] }, { fcds: [4, 6, 8, 10] }) as ReturnType<typeof dailyRequest> & { series: Record<string, unknown>[] };
  req.series.push({ target: [1, 2, 3, 4, 5, 6], index: req.series[0].index.slice(0, 6) as string[] });
  req.series.push({ target: [9, 9, 9], index: (req.series[0].index as string[]).slice(0, 3), only_as_context: true });
  return req;
};

async function submit(body: unknown, query = 'model=naive', prefix = '/forecast-jobs') {
  return app.inject({ method: 'POST', url: `${prefix}?${query}`, headers: AUTH, payload: body as object });
}

async function poll(id: string, prefix = '/forecast-jobs', headers = AUTH) {
  return until(
    async () => {
      const res = await app.inject({ method: 'GET', url: `${prefix}/${id}`, headers });
      return res.json().status !== 'in_progress' && res;
    },
    60_000,
    `job ${id}`,
  );
}

describe('a submitted backtest', () => {
  let id: string;
  beforeAll(async () => {
    const res = await submit(backtest());
    expect(res.statusCode).toBe(200);
    id = res.json().job_id;
    expect(res.json()).toEqual({ job_id: id, call_id: id, status: 'in_progress' });
  });

  test('completes with exactly the numbers POST /forecast gives', async () => {
    const done = (await poll(id)).json();
    expect(done.status).toBe('completed');
    const sync = (await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: backtest() })).json();
    expect(ForecastResponseSchema.parse(done).series).toEqual(sync.series);
    expect(done.series[2]).toEqual([]);
    expect(done.total_series).toBe(3);
  });

  test('pages through series with offset and limit', async () => {
    await poll(id);
    const page = (await app.inject({ method: 'GET', url: `/forecast-jobs/${id}?offset=1&limit=1`, headers: AUTH })).json();
    const all = (await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json();
    expect(page.series).toEqual([all.series[1]]);
    expect(page).toMatchObject({ offset: 1, limit: 1, total_series: 3 });
    const past = (await app.inject({ method: 'GET', url: `/forecast-jobs/${id}?offset=10`, headers: AUTH })).json();
    expect(past).toMatchObject({ offset: 10, total_series: 3, series: [] });
    const bad = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}?limit=0`, headers: AUTH });
    expect(bad.json().errors[0].path).toBe('query.limit');
  });

  test('writes each (series, forecast creation date) once as Parquet that DuckDB reads', async () => {
    await poll(id);
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const dir = path.join(config.dataDir, 'results', `job_id=${id}`);
    const metrics = (
      await db.runAndReadAll(`SELECT series_index, fcd_index, count(*)::INTEGER AS n FROM read_parquet('${dir}/metrics/*.parquet') GROUP BY ALL ORDER BY ALL`)
    ).getRowObjects();
    expect(metrics.map((r) => [r.series_index, r.fcd_index, r.n])).toEqual([
      [0, 0, 1],
      [0, 1, 1],
      [0, 2, 1],
      [0, 3, 1],
      [1, 0, 1],
    ]);
    const columns = (await db.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${dir}/predictions/*.parquet', hive_partitioning = false)`)).getRowObjects();
    expect(columns.map((r) => [r.column_name, r.column_type])).toEqual([
      ['job_id', 'VARCHAR'],
      ['model', 'VARCHAR'],
      ['series_index', 'INTEGER'],
      ['fcd_index', 'INTEGER'],
      ['fcd', 'INTEGER'],
      ['fcd_timestamp', 'TIMESTAMP'],
      ['step', 'INTEGER'],
      ['timestamp', 'TIMESTAMP'],
      ['timestamp_text', 'VARCHAR'],
      ['mean', 'DOUBLE'],
      ['q_0_1', 'DOUBLE'],
      ['q_0_5', 'DOUBLE'],
      ['q_0_9', 'DOUBLE'],
      ['actual', 'DOUBLE'],
    ]);
    // Timestamps are times, not text: the first forecast step follows its creation date by a day.
    const first = (
      await db.runAndReadAll(
        `SELECT strftime(fcd_timestamp, '%Y-%m-%d') AS fcd, datediff('day', fcd_timestamp, "timestamp")::INTEGER AS days, timestamp_text
         FROM read_parquet('${dir}/predictions/*.parquet') WHERE series_index = 0 AND fcd_index = 0 AND step = 1`,
      )
    ).getRowObjects();
    expect(first).toEqual([{ fcd: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), days: 1, timestamp_text: expect.any(String) }]);
    const rows = (
      await db.runAndReadAll(`SELECT count(*)::INTEGER AS n, count(actual)::INTEGER AS known FROM read_parquet('${dir}/predictions/*.parquet')`)
    ).getRowObjects()[0];
    // 5 forecasts x 3 steps; actuals exist for steps inside the 10- and 6-value targets.
    expect(rows).toEqual({ n: 15, known: 3 + 3 + 2 + 0 + 0 });
    db.closeSync();
  });

  test('downloads predictions and metrics as Parquet', async () => {
    await poll(id);
    const res = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}/predictions.parquet`, headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.apache.parquet');
    expect(res.rawPayload.subarray(0, 4).toString()).toBe('PAR1');
    const file = path.join(config.dataDir, 'download.parquet');
    fs.writeFileSync(file, res.rawPayload);
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const n = (await db.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM '${file}'`)).getRowObjects()[0].n;
    expect(n).toBe(15);
    db.closeSync();
  });

  test('belongs to its principal: 403 for another, 404 for an unknown id', async () => {
    const other = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: BOB });
    expect(other.statusCode).toBe(403);
    expect(other.json().code).toBe('forbidden');
    for (const unknown of ['7d0a0c4e-0000-4000-8000-000000000000', '..%2F..%2Fetc', 'nope']) {
      const res = await app.inject({ method: 'GET', url: `/forecast-jobs/${unknown}`, headers: AUTH });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    const listed = (await app.inject({ method: 'GET', url: '/forecast-jobs', headers: AUTH })).json().jobs.map((j: { job_id: string }) => j.job_id);
    expect(listed).toContain(id);
    const bobs = (await app.inject({ method: 'GET', url: '/forecast-jobs', headers: BOB })).json().jobs;
    expect(bobs).toEqual([]);
  });

  test('is served under the earlier /backtest-jobs paths too', async () => {
    const res = await poll(id, '/backtest-jobs');
    expect(res.json().status).toBe('completed');
  });
});

test('a job whose every series is context only completes with empty tables that still download, columns and all', async () => {
  const body = dailyRequest({ quantiles: [0.1, 0.9] }, { only_as_context: true });
  const id = (await submit(body)).json().job_id;
  expect((await poll(id)).json()).toMatchObject({ status: 'completed', total_series: 1 });
  for (const table of ['predictions', 'metrics']) {
    const res = await app.inject({ method: 'GET', url: `/forecast-jobs/${id}/${table}.parquet`, headers: AUTH });
    expect(res.statusCode, `${table}: ${res.body}`).toBe(200);
    const file = path.join(config.dataDir, `empty-${table}.parquet`);
    fs.writeFileSync(file, res.rawPayload);
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const reader = await db.runAndReadAll(`SELECT * FROM '${file}'`);
    expect(reader.getRows()).toEqual([]);
    expect(reader.columnNames()).toContain(table === 'predictions' ? 'q_0_9' : 'crps');
    db.closeSync();
  }
});

test('an invalid body is refused at submission, before any job exists', async () => {
  const before = fs.existsSync(path.join(config.dataDir, 'jobs')) ? fs.readdirSync(path.join(config.dataDir, 'jobs')).length : 0;
  const res = await submit(dailyRequest({ horizon: 0 }));
  expect(res.statusCode).toBe(422);
  expect(res.json().errors[0].path).toBe('body.horizon');
  const unavailable = await submit(dailyRequest(), 'model=tirex');
  expect(unavailable.json().code).toBe('model_unavailable');
  const after = fs.existsSync(path.join(config.dataDir, 'jobs')) ? fs.readdirSync(path.join(config.dataDir, 'jobs')).length : 0;
  expect(after).toBe(before);
});

test('a job whose model refuses a series fails with its code and message', async () => {
  const res = await submit(dailyRequest({ model_config: { model: 'naive', config: { season_length: 24 } } }), 'model=naive', '/backtest-jobs');
  const failed = (await poll(res.json().job_id)).json();
  expect(failed).toMatchObject({ status: 'failed', series: null, error: { code: 'invalid_request', message: expect.stringContaining('season_length 24') } });
});

test('a cancelled job ends as failed with code cancelled; its results cannot be downloaded', async () => {
  // A queue no worker polls yet: the job stays in progress until we start one.
  const queue = 'cancel-test';
  const api = await testServer(config, undefined, stack.jobService(queue, 1), stack.engine);
  try {
    const id = (await api.inject({ method: 'POST', url: '/forecast-jobs?model=naive', headers: AUTH, payload: backtest() })).json().job_id;
    const running = (await api.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json();
    expect(running).toMatchObject({ status: 'in_progress', series: null });
    const download = await api.inject({ method: 'GET', url: `/forecast-jobs/${id}/metrics.parquet`, headers: AUTH });
    expect(download.statusCode).toBe(409);
    // A client that sends JSON headers on every call, with an empty body: the body is ignored.
    const cancelled = await api.inject({
      method: 'POST',
      url: `/forecast-jobs/${id}/cancel`,
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: '',
    });
    expect(cancelled.json()).toEqual({ job_id: id, status: 'cancelling' });
    const late = await stack.worker(queue);
    const done = await late.runUntil(
      until(
        async () => {
          const res = (await api.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json();
          return res.status !== 'in_progress' && res;
        },
        60_000,
        'cancellation',
      ),
    );
    expect(done).toMatchObject({ status: 'failed', series: null, error: { code: 'cancelled' } });
    const again = await api.inject({ method: 'POST', url: `/forecast-jobs/${id}/cancel`, headers: AUTH });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('job_finished');
  } finally {
    await api.close();
  }
});

test('a job cancelled while its chunks run ends as failed with code cancelled, not as an internal error', async () => {
  const index = Array.from({ length: 600 }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 3_600_000).toISOString().slice(0, 19));
  const series = Array.from({ length: 6 }, (_, k) => ({
    target: index.map((_, t) => 100 + k + 20 * Math.sin((2 * Math.PI * t) / 24) + ((t * 7919 + k) % 13)),
    index,
  }));
  const id = (await submit({ series, horizon: 24, freq: 'H' }, 'model=aarima')).json().job_id;
  // Once the plan exists a chunk is running on the worker: cancel then.
  await until(async () => (await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json().progress?.chunks > 0, 60_000, 'the plan');
  const cancelled = await app.inject({ method: 'POST', url: `/forecast-jobs/${id}/cancel`, headers: AUTH });
  expect(cancelled.statusCode).toBe(200);
  const done = (await poll(id)).json();
  expect(done).toMatchObject({ status: 'failed', series: null, error: { code: 'cancelled' } });
});

test('a job larger than one run continues as new: every run keeps a small history, and the answer is whole', async () => {
  // 2 forecasts per chunk (the stack's workers), 3 chunks per run: 12 series x 2 dates = 12 chunks in 4 runs.
  const queue = 'history-budget';
  const api = await testServer(config, undefined, stack.jobService(queue, 2, 3), stack.engine);
  const worker = await stack.worker(queue);
  try {
    const body = { series: hourlySeries(12, 72).map((s) => ({ ...s, fcds: [48, 60] })), horizon: 6, freq: 'H', quantiles: [0.2, 0.8] };
    const id = (await api.inject({ method: 'POST', url: '/forecast-jobs?model=seasonal-naive', headers: AUTH, payload: body })).json().job_id;
    const done = await worker.runUntil(
      until(
        async () => {
          const res = (await api.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json();
          return res.status !== 'in_progress' && res;
        },
        60_000,
        'the job',
      ),
    );
    expect(done.status).toBe('completed');
    const sync = (await api.inject({ method: 'POST', url: '/forecast?model=seasonal-naive', headers: AUTH, payload: body })).json();
    expect(done.series).toEqual(sync.series);
    const runs: number[] = [];
    for await (const run of stack.env.client.workflow.list({ query: `WorkflowId = '${id}'` })) {
      runs.push((await stack.env.client.workflow.getHandle(id, run.runId).fetchHistory()).events?.length ?? 0);
    }
    expect(runs).toHaveLength(4);
    // Each run: start, its workflow tasks, 3 chunks (scheduled, started, completed), its end; about 30 events, whatever the job's size.
    for (const events of runs) expect(events).toBeLessThanOrEqual(40);
  } finally {
    // runUntil has stopped the worker.
    await api.close();
  }
});

test('a refit policy in a job: dates split across chunks keep the fits the whole series would, and results say which dates were refitted', async () => {
  // 8 creation dates of one series in chunks of 4: which dates are refitted counts over all 8.
  const target = Array.from({ length: 30 }, (_, t) => 50 + 3 * Math.sin(t / 2) + (t % 5) + t / 3);
  const index = target.map((_, t) => new Date(Date.UTC(2024, 0, 1 + t)).toISOString().slice(0, 10));
  const body = { series: [{ target, index, fcds: [20, 6, 8, 10, 12, 14, 16, 18] }], horizon: 3, freq: 'D', quantiles: [0.1, 0.9], refit: 3 };
  const res = await submit(body, 'model=theta');
  expect(res.statusCode).toBe(200);
  const done = (await poll(res.json().job_id)).json();
  expect(done.status).toBe('completed');
  const sync = (await app.inject({ method: 'POST', url: '/forecast?model=theta', headers: AUTH, payload: body })).json();
  expect(done.series).toEqual(sync.series);
  // In date order 6, 8, ..., 20: refitted at the 1st, 4th and 7th (6, 12, 18); fcds are in the request's order.
  expect(done.series[0].map((p: { refitted: boolean }) => p.refitted)).toEqual([false, true, false, false, true, false, false, true]);
  const metrics = await app.inject({ method: 'GET', url: `/forecast-jobs/${res.json().job_id}/metrics.parquet`, headers: AUTH });
  expect(metrics.statusCode).toBe(200);
});

test('an ensemble job (a global member couples the series) answers what the synchronous endpoint answers', async () => {
  const index = Array.from({ length: 120 }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 3_600_000).toISOString().slice(0, 19));
  const series = [0, 1, 2].map((k) => ({
    target: index.map((_, t) => 100 + 10 * k + 8 * Math.sin((2 * Math.PI * t) / 24) + ((t * 7919 + k * 104729) % 7)),
    index,
    fcds: [96, 120],
  }));
  const body = {
    series,
    horizon: 6,
    freq: 'H',
    quantiles: [0.1, 0.9],
    model_config: { model: 'ensemble', config: { members: ['theta', 'seasonal-naive', 'svc-global'], conformal_windows: 3 } },
  };
  const res = await submit(body, 'model=ensemble');
  expect(res.statusCode).toBe(200);
  const done = (await poll(res.json().job_id)).json();
  expect(done.status).toBe('completed');
  const sync = (await app.inject({ method: 'POST', url: '/forecast?model=ensemble', headers: AUTH, payload: body })).json();
  expect(done.series).toEqual(sync.series);
});

test("GET /metrics counts jobs by the state of their workflow, every caller's", async () => {
  const res = await submit(dailyRequest(), 'model=naive');
  expect((await poll(res.json().job_id)).json().status).toBe('completed');
  const metrics = await app.inject({ method: 'GET', url: '/metrics' });
  expect(metrics.statusCode).toBe(200);
  const completed = Number(metrics.body.match(/^jobs\{status="completed"\} (\d+)$/m)?.[1] ?? NaN);
  expect(completed).toBeGreaterThanOrEqual(1);
  expect(metrics.body).toMatch(/^job_chunk_duration_seconds_count\{kind="forecast"\} [1-9]\d*$/m);
});

test('DELETE a job: another principal 403, then its inputs and results are gone and the id is unknown; a running job is cancelled first', async () => {
  const done = await submit(dailyRequest(), 'model=naive');
  const id = done.json().job_id;
  expect((await poll(id)).json().status).toBe('completed');
  const url = `/forecast-jobs/${id}`;
  expect(fs.existsSync(path.join(config.dataDir, 'jobs', id))).toBe(true);
  expect(fs.existsSync(path.join(config.dataDir, 'results', `job_id=${id}`))).toBe(true);
  expect((await app.inject({ method: 'DELETE', url, headers: BOB })).statusCode).toBe(403);
  // An operation without a body reads none: an empty JSON body or `{}` is ignored, a large one is refused before anything is removed.
  const json = { ...AUTH, 'content-type': 'application/json' };
  const huge = await app.inject({ method: 'DELETE', url, headers: json, payload: JSON.stringify({ pad: 'x'.repeat(70_000) }) });
  expect(huge.statusCode).toBe(413);
  expect(huge.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(fs.existsSync(path.join(config.dataDir, 'results', `job_id=${id}`))).toBe(true);
  const deleted = await app.inject({ method: 'DELETE', url, headers: json, payload: '{}' });
  expect(deleted.statusCode).toBe(200);
  expect(deleted.json()).toEqual({ job_id: id, status: 'deleted' });
  expect((await app.inject({ method: 'GET', url, headers: AUTH })).statusCode).toBe(404);
  expect((await app.inject({ method: 'GET', url: `${url}/predictions.parquet`, headers: AUTH })).statusCode).toBe(404);
  expect((await app.inject({ method: 'DELETE', url, headers: json, payload: '' })).statusCode).toBe(404);
  expect(fs.existsSync(path.join(config.dataDir, 'jobs', id))).toBe(false);
  expect(fs.existsSync(path.join(config.dataDir, 'results', `job_id=${id}`))).toBe(false);
  const list = (await app.inject({ method: 'GET', url: '/forecast-jobs', headers: AUTH })).json();
  expect(list.jobs.some((j: { job_id: string }) => j.job_id === id)).toBe(false);

  // A job still running: 200 all the same, and nothing of it is left once the answer comes.
  const running = await submit({ series: hourlySeries(40, 400).map((s) => ({ ...s, fcds: [300, 340, 380] })), horizon: 12, freq: 'H' }, 'model=aets');
  const runningId = running.json().job_id;
  const gone = await app.inject({ method: 'DELETE', url: `/forecast-jobs/${runningId}`, headers: AUTH });
  expect(gone.statusCode).toBe(200);
  expect((await app.inject({ method: 'GET', url: `/forecast-jobs/${runningId}`, headers: AUTH })).statusCode).toBe(404);
  expect(fs.existsSync(path.join(config.dataDir, 'jobs', runningId))).toBe(false);
  expect(fs.existsSync(path.join(config.dataDir, 'results', `job_id=${runningId}`))).toBe(false);
});

test('retention: finished jobs created before the cut are deleted, later ones kept', async () => {
  const old = await submit(dailyRequest(), 'model=naive');
  const oldId = old.json().job_id;
  expect((await poll(oldId)).json().status).toBe('completed');
  await new Promise((r) => setTimeout(r, 20));
  const cut = Date.now();
  await new Promise((r) => setTimeout(r, 20));
  const recent = await submit(dailyRequest(), 'model=naive');
  const recentId = recent.json().job_id;
  expect((await poll(recentId)).json().status).toBe('completed');
  const removed = await stack.jobService('jobs-api-test', 4).removeFinishedBefore(cut);
  expect(removed).toContain(oldId);
  expect(removed).not.toContain(recentId);
  expect((await app.inject({ method: 'GET', url: `/forecast-jobs/${oldId}`, headers: AUTH })).statusCode).toBe(404);
  expect((await app.inject({ method: 'GET', url: `/forecast-jobs/${recentId}`, headers: AUTH })).statusCode).toBe(200);
});

test('a job Temporal has purged reads as the store recorded its end: completed, downloads and all; with no end recorded it is lost, and retention keeps it', async () => {
  const id = (await submit(dailyRequest(), 'model=naive')).json().job_id;
  expect((await poll(id)).json().status).toBe('completed');
  // Temporal's retention (a day on the embedded dev server's namespace) deletes a closed workflow.
  const client = stack.env.client;
  await client.workflowService.deleteWorkflowExecution({ namespace: 'default', workflowExecution: { workflowId: id } });
  const purged = () =>
    client.workflow
      .getHandle(id)
      .describe()
      .then(
        () => false,
        (err: unknown) => err instanceof WorkflowNotFoundError,
      );
  await until(purged, 30_000, 'the purge');
  expect((await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json()).toMatchObject({ status: 'completed', total_series: 1 });
  expect((await app.inject({ method: 'GET', url: `/forecast-jobs/${id}/metrics.parquet`, headers: AUTH })).statusCode).toBe(200);

  // A job whose end was never recorded (purged before anyone saw it end, or before ends were recorded).
  fs.rmSync(path.join(config.dataDir, 'jobs', id, 'outcome.json'));
  expect((await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json()).toMatchObject({ status: 'failed', error: { code: 'lost' } });
  // It may be running on another cluster than the one this process reaches: retention leaves it.
  expect(await stack.jobService('jobs-api-test', 4).removeFinishedBefore(Date.now() + 1_000)).not.toContain(id);
  expect(fs.existsSync(path.join(config.dataDir, 'jobs', id, 'job.json'))).toBe(true);
});
