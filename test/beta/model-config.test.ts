import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildServer } from '../../api/server.ts';
import { BetaResponse } from '../../engine/beta/response.ts';
import { AUTH, testConfig } from '../api/helpers.ts';
import { filePart, postBeta, queryPart, tempDir, writeParquet } from './helpers.ts';

/**
 * The beta query's `model_config` (beyond the reference): the same shapes as the stable API's, and
 * the same forecasts. Each case posts one upload to the beta endpoint and the same series to
 * POST /forecast with the same model_config, and compares means and quantiles number by number.
 */

const dir = tempDir();
let app: FastifyInstance;
let file: string;

// Three weeks of hourly data with a daily and a weekly cycle.
const HOURS = 504;
const value = (h: number) => 100 + 10 * Math.sin((2 * Math.PI * h) / 24) + 8 * Math.cos((2 * Math.PI * h) / 168) + ((h * 7919) % 5);
const index = Array.from({ length: HOURS }, (_, h) => new Date(Date.UTC(2024, 0, 1) + h * 3_600_000).toISOString().slice(0, 19));

beforeAll(async () => {
  file = await writeParquet(
    path.join(dir, 'load.parquet'),
    `SELECT TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (h) HOUR AS ts,
      100 + 10 * sin(2 * pi() * h / 24) + 8 * cos(2 * pi() * h / 168) + (h * 7919) % 5 AS y FROM range(${HOURS}) r(h)`,
  );
  app = await buildServer(testConfig());
}, 60_000);
afterAll(() => app.close());

const query = (modelConfig?: unknown) => ({
  input: { source: { uri: 'inline://load' }, columns: { ts: { kind: 'time', frequency: '1h' }, y: { kind: 'target', aggregate: 'sum' } } },
  prediction_length: '24h',
  quantiles: [0.1, 0.9],
  ...(modelConfig !== undefined && { model_config: modelConfig }),
});

/** The mean, then the 0.1 and 0.9 quantiles, one after the other. */
async function betaValues(model: string, modelConfig?: unknown): Promise<number[]> {
  const res = await postBeta(app, [queryPart(query(modelConfig)), filePart('load', file)], model);
  expect(res.statusCode, res.body).toBe(200);
  const quantiles = BetaResponse.parse(res.json()).data.targets.y.quantiles as Record<string, number[]>;
  return [...quantiles.mean, ...quantiles['0.1'], ...quantiles['0.9']];
}

async function stableValues(model: string, modelConfig: unknown): Promise<number[]> {
  const payload = { series: [{ target: index.map((_, h) => value(h)), index }], horizon: 24, freq: 'H', quantiles: [0.1, 0.9], model_config: modelConfig };
  const res = await app.inject({ method: 'POST', url: `/forecast?model=${model}`, headers: AUTH, payload });
  expect(res.statusCode, res.body).toBe(200);
  const { prediction } = res.json().series[0][0];
  return [...prediction.mean, ...prediction['0.1'], ...prediction['0.9']];
}

test.each([
  ['aets', { model: 'aets', config: { season_length: 24, estimation: 'r' } }],
  ['aarima', { model: 'aarima', config: { season_length: 24, approximation: 'off' } }],
  ['mstl', { model: 'mstl', config: { season_length: [24], trend_model: 'aarima' } }],
  ['theta', { model: 'theta', config: { season_length: 24, intervals: 'conformal', conformal_windows: 3 } }],
  ['ensemble', { model: 'ensemble', config: { members: ['naive', 'seasonal-naive'], combination: 'mean', conformal_windows: 3 } }],
])(
  '%s: a beta query with model_config forecasts as the stable API with the same model_config',
  async (model, modelConfig) => {
    const [beta, stable, byDefault] = [await betaValues(model, modelConfig), await stableValues(model, modelConfig), await betaValues(model)];
    expect(beta).toHaveLength(72);
    beta.forEach((m, j) => expect(m).toBeCloseTo(stable[j], 9));
    // The setting was read: the model's defaults forecast otherwise.
    expect(beta).not.toEqual(byDefault);
  },
  120_000,
);

test('a model_config for another model, or with an unknown setting, is a 422 naming the field', async () => {
  const mismatch = await postBeta(app, [queryPart(query({ model: 'aets', config: {} })), filePart('load', file)], 'theta');
  expect(mismatch.statusCode).toBe(422);
  expect(mismatch.headers['content-type']).toContain('application/problem+json');
  expect(mismatch.json().errors).toEqual([expect.objectContaining({ path: expect.stringMatching(/model_config\.model$/) })]);
  expect(mismatch.json().errors[0].message).toContain("is 'aets' but the query's model is 'theta'");

  const unknown = await postBeta(app, [queryPart(query({ model: 'aets', config: { estimatoin: 'r' } })), filePart('load', file)], 'aets');
  expect(unknown.statusCode).toBe(422);
  expect(unknown.json().errors.map((e: { path: string }) => e.path)).toEqual([expect.stringMatching(/model_config\.config/)]);

  const badValue = await postBeta(app, [queryPart(query({ model: 'aets', config: { estimation: 'python' } })), filePart('load', file)], 'aets');
  expect(badValue.statusCode).toBe(422);
  expect(badValue.json().errors.map((e: { path: string }) => e.path)).toEqual([expect.stringMatching(/model_config\.config\.estimation$/)]);
});
