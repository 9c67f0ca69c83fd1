import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { computeMetrics } from '../../engine/accuracy-metrics.ts';
import { AUTH, testConfig } from '../api/helpers.ts';
import { filePart, multipartBody, queryPart, RETAIL, retailQuery, tempDir, writeParquet } from '../beta/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../jobs/temporal-env.ts';

/**
 * The JSON views the dashboard reads, on a real Temporal dev server and job store: the
 * leaderboard (DuckDB over the jobs' Parquet), the metrics table and a series' history with its
 * forecasts; and the dashboard's static files, public, beside the API's own answers.
 */

let stack: JobsStack;
let app: FastifyInstance;
const BOB = { authorization: 'Bearer test-key-bob' };

beforeAll(async () => {
  stack = await startJobsStack(testConfig(), 'job-views-test', 4);
  ({ app } = stack);
}, 120_000);
afterAll(() => stack?.stop());

/** Two daily series with a weekly cycle, backtested at three dates each. */
function backtest(values = (t: number) => 50 + 10 * Math.sin((2 * Math.PI * t) / 7) + (t % 3)) {
  const index = Array.from({ length: 40 }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 86_400_000).toISOString().slice(0, 10));
  const target = index.map((_, t) => values(t));
  return {
    series: [
      { target, index, fcds: [25, 30, 35] },
      { target: target.map((v) => v * 2 + 5), index, fcds: [25, 30, 35] },
    ],
    horizon: 7,
    freq: 'D',
    quantiles: [0.1, 0.5, 0.9],
  };
}

const get = (url: string, headers = AUTH) => app.inject({ method: 'GET', url, headers });

async function completedJob(body: unknown, model: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: `/forecast-jobs?model=${model}`, headers: AUTH, payload: body as object });
  expect(res.statusCode).toBe(200);
  const id: string = res.json().job_id;
  await until(async () => (await get(`/forecast-jobs/${id}?limit=1`)).json().status === 'completed', 60_000, `job ${id}`);
  return id;
}

describe('forecast job views', () => {
  let naive: string;
  let seasonal: string;
  let other: string;
  beforeAll(async () => {
    [naive, seasonal, other] = await Promise.all([
      completedJob(backtest(), 'naive'),
      completedJob(backtest(), 'seasonal-naive'),
      completedJob(
        backtest((t) => 10 + t),
        'naive',
      ),
    ]);
  }, 120_000);

  test('the leaderboard ranks the jobs on the same data, with metrics pooled over every scored step', async () => {
    const res = await get(`/forecast-jobs/${naive}/leaderboard`);
    expect(res.statusCode).toBe(200);
    const board = res.json();
    expect(board.jobs.sort()).toEqual([naive, seasonal].sort());
    expect(board.entries.map((e: { model: string }) => e.model).sort()).toEqual(['naive', 'seasonal-naive']);
    expect(board.entries.map((e: { rank: number }) => e.rank)).toEqual([1, 2]);
    expect(board.entries[0].crps).toBeLessThanOrEqual(board.entries[1].crps);

    // The same numbers from the forecasts themselves: every step with a known actual, pooled.
    const sync = (await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: backtest() })).json();
    const body = backtest();
    const actual: number[] = [];
    const mean: number[] = [];
    const quantiles: number[][] = [[], [], []];
    sync.series.forEach((forecasts: { prediction: Record<string, number[]> }[], i: number) =>
      forecasts.forEach((f, j) => {
        const fcd = body.series[i].fcds[j];
        f.prediction.mean.forEach((m, h) => {
          if (fcd + h >= body.series[i].target.length) return;
          actual.push(body.series[i].target[fcd + h]);
          mean.push(m);
          ['0.1', '0.5', '0.9'].forEach((k, q) => quantiles[q].push(f.prediction[k][h]));
        });
      }),
    );
    const expected = computeMetrics(actual, mean, [0.1, 0.5, 0.9], quantiles);
    const entry = board.entries.find((e: { model: string }) => e.model === 'naive');
    expect(entry).toMatchObject({ job_id: naive, target: null, scored_steps: actual.length });
    for (const metric of ['mae', 'mape', 'crps', 'wape', 'scaled_bias'] as const) expect(entry[metric]).toBeCloseTo(expected[metric]!, 9);
  });

  test('the metrics table pages through one row per series and creation date, or one series', async () => {
    const all = (await get(`/forecast-jobs/${naive}/metrics?limit=4`)).json();
    expect(all).toMatchObject({ job_id: naive, total: 6, offset: 0, limit: 4 });
    expect(all.columns).toEqual(expect.arrayContaining(['series_index', 'fcd_index', 'fcd_timestamp', 'known_steps', 'mae', 'crps', 'refitted']));
    expect(all.rows.map((r: Record<string, number>) => [r.series_index, r.fcd_index])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [1, 0],
    ]);
    expect(all.rows[0].fcd_timestamp).toBe('2024-01-25T00:00:00.000Z');
    const one = (await get(`/forecast-jobs/${naive}/metrics?series_index=1&offset=1`)).json();
    expect(one.total).toBe(3);
    expect(one.rows.map((r: Record<string, number>) => [r.series_index, r.fcd_index])).toEqual([
      [1, 1],
      [1, 2],
    ]);
  });

  test('a series comes with its history, its forecasts by creation date and their actuals', async () => {
    const view = (await get(`/forecast-jobs/${naive}/series/1`)).json();
    const body = backtest();
    expect(view).toMatchObject({ job_id: naive, series_index: 1, total_series: 2, freq: 'D', horizon: 7, quantiles: [0.1, 0.5, 0.9], only_as_context: false });
    expect(view.history).toEqual({ index: body.series[1].index, target: body.series[1].target });
    const job = (await get(`/forecast-jobs/${naive}?offset=1&limit=1`)).json();
    expect(view.forecasts.map((f: { fcd: number; created_at: string }) => [f.fcd, f.created_at])).toEqual([
      [25, '2024-01-25'],
      [30, '2024-01-30'],
      [35, '2024-02-04'],
    ]);
    view.forecasts.forEach((f: Record<string, any>, j: number) => {
      const polled = job.series[0][j];
      expect({ mean: f.mean, ...f.quantiles }).toEqual(polled.prediction);
      expect(f.index).toEqual(polled.index);
      expect(f.metrics).toEqual(polled.metrics);
    });
    // The last forecast runs past the data: its actuals end where the target does.
    expect(view.forecasts[2].actual).toEqual([...body.series[1].target.slice(35), null, null]);
  });

  test('bad input is a problem naming the field; another principal is refused', async () => {
    const outside = await get(`/forecast-jobs/${naive}/series/2`);
    expect(outside.statusCode).toBe(404);
    expect(outside.json().errors).toEqual([{ path: 'path.series_index', message: expect.stringContaining('has 2 series') }]);
    const negative = await get(`/forecast-jobs/${naive}/series/-1`);
    expect(negative.statusCode).toBe(422);
    expect(negative.json().errors[0].path).toBe('path.series_index');
    const limit = await get(`/forecast-jobs/${naive}/metrics?limit=0`);
    expect(limit.json().errors[0].path).toBe('query.limit');
    for (const url of [`/forecast-jobs/${naive}/leaderboard`, `/forecast-jobs/${naive}/metrics`, `/forecast-jobs/${naive}/series/0`]) {
      expect((await get(url, BOB)).statusCode).toBe(403);
      expect((await get(url, {} as typeof AUTH)).statusCode).toBe(401);
    }
    expect((await get(`/forecast-jobs/${other}/leaderboard`)).json().jobs).toEqual([other]);
  });
});

describe('beta job views', () => {
  let id: string;
  beforeAll(async () => {
    const dir = tempDir('job-views-');
    const sales = await writeParquet(path.join(dir, 'sales.parquet'), RETAIL);
    const body = multipartBody([queryPart(retailQuery({ cutoff: [{ every: '3d' }] })), filePart('sales', sales)]);
    const res = await app.inject({ method: 'POST', url: '/v1-beta/forecast-jobs?model=naive', headers: { ...AUTH, ...body.headers }, payload: body.payload });
    expect(res.statusCode).toBe(200);
    id = res.json().job_id;
    const done = await until(
      async () => {
        const s = (await get(`/v1-beta/forecast-jobs/${id}`)).json();
        return s.status !== 'in_progress' && s;
      },
      60_000,
      `beta job ${id}`,
    );
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
  }, 120_000);

  test('its leaderboard and metrics table read the beta layout; series_index is refused', async () => {
    const board = (await get(`/v1-beta/forecast-jobs/${id}/leaderboard`)).json();
    expect(board.jobs).toEqual([id]);
    expect(board.entries).toEqual([expect.objectContaining({ rank: 1, job_id: id, model: 'naive', target: 'sales', scored_steps: expect.any(Number) })]);
    const page = (await get(`/v1-beta/forecast-jobs/${id}/metrics`)).json();
    expect(page.columns).toEqual(expect.arrayContaining(['store', 'cutoff', 'target', 'mae']));
    expect(page.total).toBeGreaterThan(0);
    const refused = await get(`/v1-beta/forecast-jobs/${id}/metrics?series_index=0`);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().errors[0].path).toBe('query.series_index');
    expect((await get(`/forecast-jobs/${id}/leaderboard`)).statusCode).toBe(404);
  });
});

describe('the dashboard beside the API', () => {
  test('/ and its assets are public static files; other paths keep the API answers', async () => {
    const page = await app.inject({ method: 'GET', url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('/main.js');
    for (const asset of ['/main.js', '/main.css']) expect((await app.inject({ method: 'GET', url: asset })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/' })).statusCode).toBe(405);
    expect((await app.inject({ method: 'GET', url: '/no-such-page' })).headers['content-type']).toContain('application/problem+json');
    expect((await app.inject({ method: 'GET', url: '/forecast-jobs' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  test('/openapi documents the new views', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/openapi' })).json();
    for (const p of [
      '/forecast-jobs/{job_id}/leaderboard',
      '/forecast-jobs/{job_id}/metrics',
      '/v1-beta/forecast-jobs/{job_id}/leaderboard',
      '/forecast-jobs/{job_id}/series/{series_index}',
    ])
      expect(doc.paths[p].get.responses['200']).toBeDefined();
    expect(doc.components.schemas.Leaderboard).toBeDefined();
  });
});
