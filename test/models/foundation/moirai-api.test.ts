/**
 * The Moirai adapters (moirai-2, moirai-moe) through the service: installed from MODELS_DIR (the test fixtures), warmed
 * up, forecast by POST /forecast, a job and the beta interface, covariates passed through, and
 * refused clearly when not installed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BetaResponse } from '../../../engine/beta/response.ts';
import { forecastMoiraiMoE } from '../../../models/foundation/moirai-moe.ts';
import { forecastMoirai2 } from '../../../models/foundation/moirai2.ts';
import { requireInstalled } from '../../../models/foundation/store.ts';
import type { ForecastTask } from '../../../models/types.ts';
import { AUTH, testConfig, testServer } from '../../api/helpers.ts';
import { filePart, postBeta, queryPart, tempDir, writeParquet } from '../../beta/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../../jobs/temporal-env.ts';
import { FIXTURES_DIR } from './reference.ts';

type Model = 'moirai-2' | 'moirai-moe';

const withModels = (dir: string) => {
  const config = testConfig();
  return { ...config, engine: { ...config.engine, models: { ...config.engine.models, modelsDir: dir } } };
};
let stack: JobsStack;
let app: FastifyInstance;
const work = tempDir('moirai-api-');

beforeAll(async () => {
  stack = await startJobsStack(withModels(FIXTURES_DIR), 'moirai-api-test', 2);
  ({ app } = stack);
}, 120_000);

afterAll(() => stack?.stop());

const hourly = (n: number, phase = 0) => {
  const target = Array.from({ length: n }, (_, i) => +(100 + 20 * Math.sin((2 * Math.PI * (i + phase)) / 24) + (i % 7)).toFixed(3));
  const index = Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1, i)).toISOString().slice(0, 19));
  return { target, index };
};
const request = (extra: Record<string, unknown> = {}) => ({
  series: [hourly(90), hourly(30, 5)],
  horizon: 40,
  freq: 'H',
  quantiles: [0.1, 0.5, 0.9],
  ...extra,
});
const postTo = (server: FastifyInstance, model: string, body: unknown) =>
  server.inject({ method: 'POST', url: `/forecast?model=${model}`, headers: AUTH, payload: body as object });
const post = (model: string, body: unknown) => postTo(app, model, body);

/** What the adapter gives for these tasks, run in this thread on the installed fixture. */
async function direct(model: Model, tasks: ForecastTask[]) {
  const installed = requireInstalled(model, FIXTURES_DIR);
  const session = await ort.InferenceSession.create(installed.onnxPath);
  const run = (feeds: Record<string, ort.Tensor>) => session.run(feeds);
  try {
    if (model === 'moirai-moe') return await forecastMoiraiMoE(run, installed.manifest as never, tasks);
    return await forecastMoirai2(run, installed.manifest as never, tasks);
  } finally {
    await session.release();
  }
}

/** Equal up to float32 arithmetic (rows batched differently across threads and job chunks). */
function expectClose(got: number[], expected: ArrayLike<number>, target: number[]) {
  const level = target.reduce((sum, v) => sum + Math.abs(v), 0) / target.length;
  expect(got).toHaveLength(expected.length);
  got.forEach((g, i) => expect(Math.abs(g - expected[i])).toBeLessThanOrEqual(1e-5 * Math.max(1, level, Math.abs(expected[i]))));
}

describe.each(['moirai-2', 'moirai-moe'] as const)('%s installed in MODELS_DIR', (model) => {
  test('GET /warmup loads its session', async () => {
    const res = await app.inject({ method: 'GET', url: `/warmup?model=${model}`, headers: AUTH });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ model, status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, mean and quantiles, past its native horizon', async () => {
    const body = request();
    const res = await post(model, body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await direct(
      model,
      body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: 40, quantiles: body.quantiles, seasonLength: 24 })),
    );
    res.json().series.forEach(([p]: { prediction: Record<string, number[]>; index: string[] }[], i: number) => {
      expect(Object.keys(p.prediction)).toEqual(['mean', '0.1', '0.5', '0.9']);
      expect(p.index).toHaveLength(40);
      expectClose(p.prediction.mean, expected[i].mean, body.series[i].target);
      ['0.1', '0.5', '0.9'].forEach((k, j) => expectClose(p.prediction[k], expected[i].quantiles[j], body.series[i].target));
    });
  });

  test('takes historical and future variables as extra variates, and generated covariates; refuses static ones', async () => {
    const plain = request();
    const future = (n: number) => Array.from({ length: n + 40 }, (_, i) => (i % 24 < 8 ? 1 : 0));
    const series = plain.series.map((s) => ({
      ...s,
      hist_variables: { load: s.target.map((v) => v / 2 + 1) },
      future_variables: { shift: future(s.target.length) },
    }));
    const body = request({ series });
    const res = await post(model, body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await direct(
      model,
      series.map((s) => ({
        history: Float64Array.from(s.target),
        horizon: 40,
        quantiles: body.quantiles,
        seasonLength: 24,
        covariates: { hist: s.hist_variables, future: s.future_variables, static: {} },
      })),
    );
    res
      .json()
      .series.forEach(([p]: { prediction: Record<string, number[]> }[], i: number) => expectClose(p.prediction.mean, expected[i].mean, body.series[i].target));
    const without = (await post(model, plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);

    const generated = await post(model, request({ covariates: [{ type: 'temporal_features', config: { components: ['hour'] } }] }));
    expect(generated.statusCode, generated.body).toBe(200);
    const withStatic = await post(model, request({ series: plain.series.map((s) => ({ ...s, static_variables: { size: 3 } })) }));
    expect(withStatic.statusCode).toBe(422);
    expect(withStatic.json().errors[0].path).toBe('body.series[0].static_variables');
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = request({ series: [{ ...hourly(90), fcds: [60, 90] }, hourly(30, 5), hourly(50, 2)] });
    const submitted = await app.inject({ method: 'POST', url: `/forecast-jobs?model=${model}`, headers: AUTH, payload: body });
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
    const sync = (await post(model, body)).json();
    expect(done.series.map((s: unknown[]) => s.length)).toEqual([2, 1, 1]);
    done.series.forEach((s: { prediction: Record<string, number[]> }[], i: number) =>
      s.forEach((p, j) => {
        for (const key of ['mean', '0.1', '0.5', '0.9']) expectClose(p.prediction[key], sync.series[i][j].prediction[key], body.series[i].target);
      }),
    );
    expect(done.series[0][0].metrics).not.toBeNull();
  }, 90_000);

  test('the beta interface forecasts a Parquet upload with the adapter numbers', async () => {
    const days = 70;
    const file = await writeParquet(
      path.join(work, `weekly-${model}.parquet`),
      `SELECT DATE '2024-01-01' + d::INTEGER AS ts, 50 + 10 * (d % 7) + (d % 3) * 0.5 AS y FROM range(${days}) r(d)`,
    );
    const query = {
      input: { source: { uri: 'inline://w' }, columns: { ts: { kind: 'time', frequency: '1d' }, y: { kind: 'target', aggregate: 'mean' } } },
      prediction_length: '1w',
      quantiles: [0.1, 0.9],
    };
    const res = await postBeta(app, [queryPart(query), filePart('w', file)], model);
    expect(res.statusCode, res.body).toBe(200);
    const quantiles = BetaResponse.parse(res.json()).data.targets.y.quantiles;
    const history = Array.from({ length: days }, (_, d) => 50 + 10 * (d % 7) + (d % 3) * 0.5);
    const [expected] = await direct(model, [{ history: Float64Array.from(history), horizon: 7, quantiles: [0.1, 0.9], seasonLength: 7 }]);
    expectClose(quantiles.mean as number[], expected.mean, history);
    expectClose(quantiles['0.1'] as number[], expected.quantiles[0], history);
    expectClose(quantiles['0.9'] as number[], expected.quantiles[1], history);
  });
});

describe.each(['moirai-2', 'moirai-moe'] as const)('%s not installed', (model) => {
  let dir: string;
  let bare: FastifyInstance;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'models-'));
    bare = await testServer(withModels(dir));
  });
  afterAll(async () => {
    await bare.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers 422 model_unavailable saying where the export goes and how to make it, never "no adapter"', async () => {
    for (const res of [await postTo(bare, model, request()), await bare.inject({ method: 'GET', url: `/warmup?model=${model}`, headers: AUTH })]) {
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('model_unavailable');
      expect(res.json().detail).toContain(path.join(dir, model));
      expect(res.json().detail).toContain('manifest.json');
      expect(res.json().detail).toContain(`tools/export/export.py ${model}`);
      expect(res.json().detail).not.toContain('no adapter');
    }
  });
});
