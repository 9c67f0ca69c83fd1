/**
 * Foundation models through the service: installed from MODELS_DIR (the test fixtures), warmed
 * up, forecast by POST /forecast and by a job, and refused clearly when missing or corrupt.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { forecastChronos2 } from '../../../models/foundation/chronos2.ts';
import { forecastPatchTSTFM } from '../../../models/foundation/patchtst-fm.ts';
import { requireInstalled } from '../../../models/foundation/store.ts';
import { forecastTimesFM2 } from '../../../models/foundation/timesfm2.ts';
import { forecastTimesFM25 } from '../../../models/foundation/timesfm2p5.ts';
import { forecastTiRex } from '../../../models/foundation/tirex.ts';
import { forecastToto2 } from '../../../models/foundation/toto.ts';
import { AUTH, testConfig, testServer } from '../../api/helpers.ts';
import { startJobsStack, until, type JobsStack } from '../../jobs/temporal-env.ts';
import { FIXTURES_DIR } from './reference.ts';

/** A configuration whose MODELS_DIR is `dir`. */
const withModels = (dir: string) => {
  const config = testConfig();
  return { ...config, engine: { ...config.engine, models: { ...config.engine.models, modelsDir: dir } } };
};
const config = withModels(FIXTURES_DIR);
let stack: JobsStack;
let app: FastifyInstance;

beforeAll(async () => {
  stack = await startJobsStack(config, 'foundation-api-test', 2);
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

/** What the adapter gives for the request's series, run in this thread on the same model. */
async function direct(model: 'chronos-2' | 'timesfm-2p5' | 'timesfm-2' | 'patchtst-fm' | 'toto-2' | 'tirex', body: ReturnType<typeof request>) {
  const installed = requireInstalled(model, FIXTURES_DIR);
  const session = await ort.InferenceSession.create(installed.onnxPath);
  const tasks = body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: body.horizon, quantiles: body.quantiles, seasonLength: 24 }));
  const run = (feeds: Record<string, ort.Tensor>) => session.run(feeds);
  try {
    if (model === 'chronos-2') return await forecastChronos2(run, installed.manifest as never, tasks);
    if (model === 'timesfm-2') return await forecastTimesFM2(run, installed.manifest as never, tasks);
    if (model === 'patchtst-fm') return await forecastPatchTSTFM(run, installed.manifest as never, tasks);
    if (model === 'toto-2') return await forecastToto2(run, installed.manifest as never, tasks);
    if (model === 'tirex') return await forecastTiRex(run, installed.manifest as never, tasks);
    return await forecastTimesFM25(run, installed.manifest as never, tasks);
  } finally {
    await session.release();
  }
}

/**
 * Equal up to float32 arithmetic: the service splits independent series across its threads (and
 * a job across chunks), so a series may share its network call with other rows than here, and
 * TimesFM then sends another count of padded patches; sums in another order differ in the last
 * float32 digits, about 1e-6 of the series' level (its mean absolute value), never more.
 */
function expectClose(got: number[], expected: ArrayLike<number>, target: number[]) {
  const level = target.reduce((sum, v) => sum + Math.abs(v), 0) / target.length;
  expect(got).toHaveLength(expected.length);
  got.forEach((g, i) => expect(Math.abs(g - expected[i])).toBeLessThanOrEqual(1e-5 * Math.max(1, level, Math.abs(expected[i]))));
}

describe.each(['chronos-2', 'timesfm-2p5', 'timesfm-2', 'patchtst-fm', 'toto-2', 'tirex'] as const)('%s installed in MODELS_DIR', (model) => {
  test('GET /warmup loads its session and reports the load time', async () => {
    const res = await app.inject({ method: 'GET', url: `/warmup?model=${model}`, headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ model, status: 'ready' });
    expect(res.json().load_time_ms).toBeGreaterThan(0);
  });

  test('POST /forecast answers the adapter forecast of this model, mean and quantiles', async () => {
    const body = request();
    const res = await post(model, body);
    expect(res.statusCode).toBe(200);
    const expected = await direct(model, body);
    res.json().series.forEach(([p]: { prediction: Record<string, number[]>; index: string[] }[], i: number) => {
      expect(Object.keys(p.prediction)).toEqual(['mean', '0.1', '0.5', '0.9']);
      expect(p.index).toHaveLength(40);
      expectClose(p.prediction.mean, expected[i].mean, body.series[i].target);
      ['0.1', '0.5', '0.9'].forEach((k, j) => expectClose(p.prediction[k], expected[i].quantiles[j], body.series[i].target));
    });
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = request({ series: [{ ...hourly(90), fcds: [60, 90] }, hourly(30, 5), hourly(50, 2)] });
    const submitted = await app.inject({ method: 'POST', url: `/forecast-jobs?model=${model}`, headers: AUTH, payload: body });
    expect(submitted.statusCode).toBe(200);
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
    done.series.forEach((s: { prediction: Record<string, number[]>; metrics: unknown }[], i: number) =>
      s.forEach((p, j) => {
        for (const key of ['mean', '0.1', '0.5', '0.9']) expectClose(p.prediction[key], sync.series[i][j].prediction[key], body.series[i].target);
      }),
    );
    // The backtest at 60 of 90 has the true values: metrics are computed.
    expect(done.series[0][0].metrics).not.toBeNull();
  }, 90_000);
});

describe('covariates', () => {
  const future = (n: number) => Array.from({ length: n + 40 }, (_, i) => (i % 24 < 8 ? 1 : 0));
  test('chronos-2 takes historical and future variables through its covariate inputs', async () => {
    const plain = request();
    const body = request({
      series: plain.series.map((s) => ({
        ...s,
        hist_variables: { load: s.target.map((v) => v / 2 + 1) },
        future_variables: { shift: future(s.target.length) },
      })),
    });
    const res = await post('chronos-2', body);
    expect(res.statusCode).toBe(200);
    const without = (await post('chronos-2', plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);
  });

  test.each(['timesfm-2p5', 'timesfm-2'])('%s takes future variables and generated covariates through its in-context regression', async (model) => {
    const plain = request();
    const body = request({ series: plain.series.map((s) => ({ ...s, future_variables: { shift: future(s.target.length) } })) });
    const res = await post(model, body);
    expect(res.statusCode, res.body).toBe(200);
    const without = (await post(model, plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);
    const generated = await post(model, request({ covariates: [{ type: 'temporal_features', config: { components: ['hour'] } }] }));
    expect(generated.statusCode, generated.body).toBe(200);
    // Text values are refused, as the API reference gives string covariates to tabpfn-ts and svc-global only.
    const shift = (n: number) => future(n).map((v) => (v ? 'day' : 'night'));
    const text = await post(model, request({ series: plain.series.map((s) => ({ ...s, future_variables: { shift: shift(s.target.length) } })) }));
    expect(text.statusCode).toBe(422);
    expect(text.json().errors[0].path).toBe('body.series[0].future_variables.shift');
  });

  test('chronos-2 refuses static variables; timesfm-2p5 refuses historical ones; nothing is dropped', async () => {
    const withStatic = request({ series: request().series.map((s) => ({ ...s, static_variables: { size: 3 } })) });
    const a = await post('chronos-2', withStatic);
    expect(a.statusCode).toBe(422);
    expect(a.json().errors[0].path).toBe('body.series[0].static_variables');
    const withHistorical = request({ series: request().series.map((s) => ({ ...s, hist_variables: { load: s.target } })) });
    const b = await post('timesfm-2p5', withHistorical);
    expect(b.statusCode).toBe(422);
    expect(b.json().errors[0].path).toBe('body.series[0].hist_variables');
  });
});

test("chronos-2 with is_global forecasts the series of one creation time jointly, as the pipeline's cross_learning", async () => {
  // Two series ending at the same hour, and a context series over the same hours.
  const long = hourly(90);
  const tail = (s: ReturnType<typeof hourly>, n: number, shift = 0) => ({
    target: s.target.slice(-n).map((v) => +(v * 0.5 + shift).toFixed(3)),
    index: s.index.slice(-n),
  });
  const series = [long, tail(long, 30, 7)];
  const body = (isGlobal: boolean, extra: object[] = []) => ({
    ...request(),
    series: [...series, ...extra],
    model_config: { model: 'chronos-2', config: { is_global: isGlobal } },
  });
  const [separate, joint, informed] = await Promise.all([
    post('chronos-2', body(false)),
    post('chronos-2', body(true)),
    post('chronos-2', body(true, [{ ...tail(long, 60, 3), only_as_context: true }])),
  ]);
  for (const res of [separate, joint, informed]) expect(res.statusCode, res.body).toBe(200);
  const means = (res: typeof joint) =>
    res
      .json()
      .series.slice(0, 2)
      .map((s: { prediction: { mean: number[] } }[]) => s[0].prediction.mean);

  const installed = requireInstalled('chronos-2', FIXTURES_DIR);
  const session = await ort.InferenceSession.create(installed.onnxPath);
  try {
    const tasks = series.map((s) => ({ history: Float64Array.from(s.target), horizon: 40, quantiles: [0.1, 0.5, 0.9], seasonLength: 24 }));
    const expected = await forecastChronos2((feeds) => session.run(feeds), installed.manifest as never, tasks, { crossLearning: true });
    means(joint).forEach((m: number[], i: number) => expectClose(m, expected[i].mean, series[i].target));
  } finally {
    await session.release();
  }
  expect(means(joint)[0]).not.toEqual(means(separate)[0]);
  expect(informed.json().series[2]).toEqual([]); // the context series is fed, not forecast
  expect(means(informed)[0]).not.toEqual(means(joint)[0]);
});

describe('a foundation model that is not installed, or not intact', () => {
  let dir: string;
  /** A server whose MODELS_DIR is an empty folder. */
  let bare: FastifyInstance;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'models-'));
    bare = await testServer(withModels(dir));
  });
  afterAll(async () => {
    await bare.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers 422 model_unavailable naming the folder and file it expects, for forecasts and warm-up', async () => {
    for (const res of [await postTo(bare, 'chronos-2', request()), await bare.inject({ method: 'GET', url: '/warmup?model=chronos-2', headers: AUTH })]) {
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('model_unavailable');
      expect(res.json().detail).toContain(path.join(dir, 'chronos-2'));
      expect(res.json().detail).toContain('manifest.json');
      expect(res.json().detail).not.toContain('timesfm-2p5,'); // not offered as available either
    }
  });

  test('answers 422 for a corrupt ONNX file, never another model output', async () => {
    const folder = path.join(dir, 'timesfm-2p5');
    fs.mkdirSync(folder, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES_DIR, 'timesfm-2p5', 'manifest.json'), path.join(folder, 'manifest.json'));
    const bytes = fs.readFileSync(path.join(FIXTURES_DIR, 'timesfm-2p5', 'model.onnx'));
    bytes[100] ^= 0xff;
    fs.writeFileSync(path.join(folder, 'model.onnx'), bytes);
    const res = await postTo(bare, 'timesfm-2p5', request());
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('model_unavailable');
    expect(res.json().detail).toContain('corrupt');
  });

  test('other foundation names answer that this server has no adapter for them', async () => {
    const res = await post('tabicl', request());
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('model_unavailable');
    expect(res.json().detail).toContain('no adapter');
  });
});
