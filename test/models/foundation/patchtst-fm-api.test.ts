/**
 * patchtst-fm through the service beyond what api.test.ts checks for every installed foundation
 * model (POST /forecast, warm-up, jobs): the beta interface, its horizon limit and covariate
 * refusals as 422s, and the not-installed answer.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BetaResponse } from '../../../engine/beta/response.ts';
import { forecastPatchTSTFM } from '../../../models/foundation/patchtst-fm.ts';
import { requireInstalled, type PatchTSTFMManifest } from '../../../models/foundation/store.ts';
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
const post = (app: FastifyInstance, body: unknown) =>
  app.inject({ method: 'POST', url: '/forecast?model=patchtst-fm', headers: AUTH, payload: body as object });

describe('patchtst-fm installed in MODELS_DIR', () => {
  const dir = tempDir();
  let app: FastifyInstance;
  let retail: string;
  beforeAll(async () => {
    retail = await writeParquet(path.join(dir, 'retail.parquet'), RETAIL);
    app = await testServer(withModels(FIXTURES_DIR));
  });
  afterAll(async () => app?.close());

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    const res = await postBeta(app, [queryPart(retailQuery({}, { hierarchies: { sku: [['store']] } })), filePart('sales', retail)], 'patchtst-fm');
    expect(res.statusCode, res.body).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    expect(data.time).toHaveLength(18); // 4 (store, sku) series and 2 store roll-ups, 3 days each
    const rows = data.time.map((_, i) => i).filter((i) => data.identifiers.store[i] === 'a' && data.identifiers.sku[i] === '2');
    // Store a, sku 2: sales 10, 20, ..., 140 over the 14 days (RETAIL).
    const installed = requireInstalled('patchtst-fm', FIXTURES_DIR);
    const session = await ort.InferenceSession.create(installed.onnxPath);
    try {
      const history = Float64Array.from({ length: 14 }, (_, d) => (d + 1) * 10);
      const [expected] = await forecastPatchTSTFM((feeds) => session.run(feeds), installed.manifest as PatchTSTFMManifest, [
        { history, horizon: 3, quantiles: [0.1, 0.9], seasonLength: 7 },
      ]);
      const close = (got: (number | null)[], want: Float64Array) =>
        got.forEach((g, t) => expect(Math.abs(g! - want[t])).toBeLessThanOrEqual(1e-4 * Math.abs(want[t])));
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
    } finally {
      await session.release();
    }
  });

  test('a horizon past one pass is a 422 that names the horizon and its limit', async () => {
    const { context_length: C } = requireInstalled('patchtst-fm', FIXTURES_DIR).manifest as PatchTSTFMManifest;
    const ok = await post(app, forecastBody({ horizon: C - 1 }));
    expect(ok.statusCode, ok.body).toBe(200);
    const res = await post(app, forecastBody({ horizon: C }));
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('invalid_request');
    expect(res.json().detail).toContain(`horizon ${C} is out of range for patchtst-fm: it forecasts at most ${C - 1} steps`);
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

describe('patchtst-fm not installed', () => {
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
      await bare.inject({ method: 'GET', url: '/warmup?model=patchtst-fm', headers: AUTH }),
      await postBeta(bare, [queryPart(retailQuery())], 'patchtst-fm'),
    ];
    for (const res of answers) {
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('model_unavailable');
      expect(res.json().detail).toContain(path.join(dir, 'patchtst-fm'));
      expect(res.json().detail).toContain('manifest.json');
      expect(res.json().detail).toContain('python tools/export/export.py patchtst-fm --checkpoint');
      expect(res.json().detail).not.toContain('no adapter');
    }
  });
});
