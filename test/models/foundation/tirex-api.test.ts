/**
 * tirex through the service beyond what api.test.ts checks for every installed foundation model
 * (POST /forecast, warm-up, jobs): the beta interface, a horizon rolled out past the context,
 * covariate refusals as 422s, and the not-installed answer.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BetaResponse } from '../../../engine/beta/response.ts';
import { requireInstalled, type TiRexManifest } from '../../../models/foundation/store.ts';
import { forecastTiRex } from '../../../models/foundation/tirex.ts';
import { AUTH, testConfig, testServer } from '../../api/helpers.ts';
import { filePart, postBeta, queryPart, RETAIL, retailQuery, tempDir, writeParquet } from '../../beta/helpers.ts';
import { FIXTURES_DIR } from './reference.ts';

const withModels = (dir: string) => {
  const config = testConfig();
  return { ...config, engine: { ...config.engine, models: { ...config.engine.models, modelsDir: dir } } };
};

const daily = (n: number) => ({
  target: Array.from({ length: n }, (_, i) => +(50 + 10 * Math.sin((2 * Math.PI * i) / 7) + 0.2 * i).toFixed(3)),
  index: Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10)),
});
const forecastBody = (extra: Record<string, unknown> = {}) => ({
  series: [daily(60), daily(20)],
  horizon: 14,
  freq: 'D',
  quantiles: [0.1, 0.5, 0.9],
  ...extra,
});
const post = (app: FastifyInstance, body: unknown) => app.inject({ method: 'POST', url: '/forecast?model=tirex', headers: AUTH, payload: body as object });

/** The adapter's forecast of series, run in this thread on the fixture. */
async function direct(histories: Float64Array[], horizon: number, quantiles: number[]) {
  const installed = requireInstalled('tirex', FIXTURES_DIR);
  const session = await ort.InferenceSession.create(installed.onnxPath);
  try {
    const tasks = histories.map((history) => ({ history, horizon, quantiles, seasonLength: 7 }));
    return await forecastTiRex((feeds) => session.run(feeds), installed.manifest as TiRexManifest, tasks);
  } finally {
    await session.release();
  }
}

const close = (got: (number | null)[], want: Float64Array) => {
  expect(got).toHaveLength(want.length);
  got.forEach((g, t) => expect(Math.abs(g! - want[t])).toBeLessThanOrEqual(1e-4 * Math.abs(want[t])));
};

describe('tirex installed in MODELS_DIR', () => {
  const dir = tempDir();
  let app: FastifyInstance;
  let retail: string;
  beforeAll(async () => {
    retail = await writeParquet(path.join(dir, 'retail.parquet'), RETAIL);
    app = await testServer(withModels(FIXTURES_DIR));
  });
  afterAll(async () => app?.close());

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    const res = await postBeta(app, [queryPart(retailQuery({}, { hierarchies: { sku: [['store']] } })), filePart('sales', retail)], 'tirex');
    expect(res.statusCode, res.body).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    expect(data.time).toHaveLength(18); // 4 (store, sku) series and 2 store roll-ups, 3 days each
    const rows = data.time.map((_, i) => i).filter((i) => data.identifiers.store[i] === 'a' && data.identifiers.sku[i] === '2');
    // Store a, sku 2: sales 10, 20, ..., 140 over the 14 days (RETAIL).
    const [expected] = await direct([Float64Array.from({ length: 14 }, (_, d) => (d + 1) * 10)], 3, [0.1, 0.9]);
    close(
      rows.map((i) => data.targets.sales.quantiles.mean[i]),
      expected.mean,
    );
    close(
      rows.map((i) => data.targets.sales.quantiles['0.1'][i]),
      expected.quantiles[0],
    );
    close(
      rows.map((i) => data.targets.sales.quantiles['0.9'][i]),
      expected.quantiles[1],
    );
  });

  test('a horizon past the context is rolled out as the reference does, with the adapter numbers', async () => {
    const { context_length: C } = requireInstalled('tirex', FIXTURES_DIR).manifest as TiRexManifest;
    const body = forecastBody({ horizon: C + 10 });
    const res = await post(app, body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await direct(
      body.series.map((s) => Float64Array.from(s.target)),
      C + 10,
      [0.1, 0.5, 0.9],
    );
    res.json().series.forEach(([p]: { prediction: Record<string, number[]> }[], i: number) => {
      close(p.prediction.mean, expected[i].mean);
      ['0.1', '0.5', '0.9'].forEach((k, j) => close(p.prediction[k], expected[i].quantiles[j]));
    });
  });

  test('covariates are refused, never dropped', async () => {
    const plain = forecastBody();
    const body = { ...plain, series: plain.series.map((s) => ({ ...s, hist_variables: { load: s.target } })) };
    const res = await post(app, body);
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.series[0].hist_variables');
    const generated = await post(app, forecastBody({ covariates: [{ type: 'temporal_features', config: { components: ['dayofweek'] } }] }));
    expect(generated.statusCode).toBe(422);
  });
});

describe('tirex not installed', () => {
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
      await post(bare, forecastBody()),
      await bare.inject({ method: 'GET', url: '/warmup?model=tirex', headers: AUTH }),
      await postBeta(bare, [queryPart(retailQuery())], 'tirex'),
    ];
    for (const res of answers) {
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('model_unavailable');
      expect(res.json().detail).toContain(path.join(dir, 'tirex'));
      expect(res.json().detail).toContain('manifest.json');
      expect(res.json().detail).toContain('python tools/export/export.py tirex --checkpoint');
      expect(res.json().detail).not.toContain('no adapter');
    }
  });

  test('tirex-2 answers that this server has no adapter for it', async () => {
    const res = await bare.inject({ method: 'POST', url: '/forecast?model=tirex-2', headers: AUTH, payload: forecastBody() });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('model_unavailable');
    expect(res.json().detail).toContain('no adapter');
  });
});
