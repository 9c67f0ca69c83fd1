/**
 * reverso through the service: installed from MODELS_DIR (the test fixture), warmed up, forecast
 * by POST /forecast, a job and the beta interface with the adapter's numbers, covariates refused,
 * and the not-installed answer.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BetaResponse } from '../../../engine/beta/response.ts';
import { forecastReverso } from '../../../models/foundation/reverso.ts';
import { requireInstalled, type ReversoManifest } from '../../../models/foundation/store.ts';
import type { ForecastTask } from '../../../models/types.ts';
import { AUTH, testConfig, testServer } from '../../api/helpers.ts';
import { filePart, postBeta, queryPart, RETAIL, retailQuery, tempDir, writeParquet } from '../../beta/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../../jobs/temporal-env.ts';
import { FIXTURES_DIR } from './reference.ts';

const withModels = (dir: string) => {
  const config = testConfig();
  return { ...config, engine: { ...config.engine, models: { ...config.engine.models, modelsDir: dir } } };
};

const hourly = (n: number, phase = 0) => {
  const target = Array.from({ length: n }, (_, i) => +(100 + 20 * Math.sin((2 * Math.PI * (i + phase)) / 24) + (i % 7)).toFixed(3));
  const index = Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1, i)).toISOString().slice(0, 19));
  return { target, index };
};
const request = (extra: Record<string, unknown> = {}) => ({
  series: [hourly(300), hourly(30, 5)],
  horizon: 100,
  freq: 'H',
  quantiles: [0.1, 0.5, 0.9],
  ...extra,
});
const postTo = (server: FastifyInstance, body: unknown) =>
  server.inject({ method: 'POST', url: '/forecast?model=reverso', headers: AUTH, payload: body as object });

/** What the adapter gives for these tasks, run in this thread on the installed fixture. */
async function direct(tasks: ForecastTask[]) {
  const installed = requireInstalled('reverso', FIXTURES_DIR);
  const session = await ort.InferenceSession.create(installed.onnxPath);
  try {
    return await forecastReverso((feeds) => session.run(feeds), installed.manifest as ReversoManifest, tasks);
  } finally {
    await session.release();
  }
}

/** Equal up to float32 arithmetic (rows batched differently across threads and job chunks). */
function expectClose(got: (number | null)[], expected: ArrayLike<number>, target: number[]) {
  const level = target.reduce((sum, v) => sum + Math.abs(v), 0) / target.length;
  expect(got).toHaveLength(expected.length);
  got.forEach((g, i) => expect(Math.abs(g! - expected[i])).toBeLessThanOrEqual(1e-5 * Math.max(1, level, Math.abs(expected[i]))));
}

describe('reverso installed in MODELS_DIR', () => {
  let stack: JobsStack;
  let app: FastifyInstance;
  const work = tempDir('reverso-api-');
  beforeAll(async () => {
    stack = await startJobsStack(withModels(FIXTURES_DIR), 'reverso-api-test', 2);
    ({ app } = stack);
  }, 120_000);
  afterAll(() => stack?.stop());

  test('GET /warmup loads its session', async () => {
    const res = await app.inject({ method: 'GET', url: '/warmup?model=reverso', headers: AUTH });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ model: 'reverso', status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, rolled out past 48 steps; every quantile is the point', async () => {
    const body = request();
    const res = await postTo(app, body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await direct(
      body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: 100, quantiles: body.quantiles, seasonLength: 24 })),
    );
    res.json().series.forEach(([p]: { prediction: Record<string, number[]>; index: string[] }[], i: number) => {
      expect(Object.keys(p.prediction)).toEqual(['mean', '0.1', '0.5', '0.9']);
      expect(p.index).toHaveLength(100);
      for (const key of ['mean', '0.1', '0.5', '0.9']) expectClose(p.prediction[key], expected[i].mean, body.series[i].target);
    });
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = request({ horizon: 40, series: [{ ...hourly(300), fcds: [260, 300] }, hourly(30, 5), hourly(50, 2)] });
    const submitted = await app.inject({ method: 'POST', url: '/forecast-jobs?model=reverso', headers: AUTH, payload: body });
    expect(submitted.statusCode, submitted.body).toBe(200);
    const id = submitted.json().job_id;
    const done = await until(
      async () => {
        const res = (await app.inject({ method: 'GET', url: `/forecast-jobs/${id}`, headers: AUTH })).json();
        return res.status !== 'in_progress' && res;
      },
      60_000,
      `job ${id}`,
    );
    expect(done.status).toBe('completed');
    const sync = (await postTo(app, body)).json();
    expect(done.series.map((s: unknown[]) => s.length)).toEqual([2, 1, 1]);
    done.series.forEach((s: { prediction: Record<string, number[]> }[], i: number) =>
      s.forEach((p, j) => {
        for (const key of ['mean', '0.1', '0.5', '0.9']) expectClose(p.prediction[key], sync.series[i][j].prediction[key], body.series[i].target);
      }),
    );
    expect(done.series[0][0].metrics).not.toBeNull();
  }, 90_000);

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    const retail = await writeParquet(path.join(work, 'retail.parquet'), RETAIL);
    const res = await postBeta(app, [queryPart(retailQuery({}, { hierarchies: { sku: [['store']] } })), filePart('sales', retail)], 'reverso');
    expect(res.statusCode, res.body).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    expect(data.time).toHaveLength(18); // 4 (store, sku) series and 2 store roll-ups, 3 days each
    const rows = data.time.map((_, i) => i).filter((i) => data.identifiers.store[i] === 'a' && data.identifiers.sku[i] === '2');
    // Store a, sku 2: sales 10, 20, ..., 140 over the 14 days (RETAIL).
    const history = Float64Array.from({ length: 14 }, (_, d) => (d + 1) * 10);
    const [expected] = await direct([{ history, horizon: 3, quantiles: [0.1, 0.9], seasonLength: 7 }]);
    const target = Array.from(history);
    expectClose(
      rows.map((i) => data.targets.sales.quantiles.mean[i]),
      expected.mean,
      target,
    );
    expectClose(
      rows.map((i) => data.targets.sales.quantiles['0.9'][i]),
      expected.mean,
      target,
    );
  });

  test('covariates are refused, never dropped', async () => {
    const plain = request();
    const res = await postTo(app, { ...plain, series: plain.series.map((s) => ({ ...s, hist_variables: { load: s.target } })) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.series[0].hist_variables');
    const generated = await postTo(app, request({ covariates: [{ type: 'temporal_features', config: { components: ['dayofweek'] } }] }));
    expect(generated.statusCode).toBe(422);
  });
});

describe('reverso not installed', () => {
  let dir: string;
  let bare: FastifyInstance;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'models-'));
    bare = await testServer(withModels(dir));
  });
  afterAll(async () => {
    await bare?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers 422 model_unavailable saying where the export goes and how to make it, never "no adapter"', async () => {
    const answers = [
      await postTo(bare, request()),
      await bare.inject({ method: 'GET', url: '/warmup?model=reverso', headers: AUTH }),
      await postBeta(bare, [queryPart(retailQuery())], 'reverso'),
    ];
    for (const res of answers) {
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('model_unavailable');
      expect(res.json().detail).toContain(path.join(dir, 'reverso'));
      expect(res.json().detail).toContain('manifest.json');
      expect(res.json().detail).toContain('python tools/export/export.py reverso --checkpoint');
      expect(res.json().detail).not.toContain('no adapter');
    }
  });
});
