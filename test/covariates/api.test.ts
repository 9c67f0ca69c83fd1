import fs from 'node:fs';
import path from 'node:path';
import Holidays from 'date-holidays';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rng } from '../../models/numerics/random.ts';
import { buildServer } from '../../api/server.ts';
import { AUTH, testConfig } from '../api/helpers.ts';
import { testTempDir } from '../temp-root.ts';

let app: FastifyInstance;
let floatDir: string;
beforeAll(async () => {
  floatDir = testTempDir('float-api-');
  const rows = days('2022-12-01', 500).map((d, i) => `${d},${(10 + Math.sin(i / 9)).toFixed(4)}`);
  fs.writeFileSync(path.join(floatDir, 'weather.csv'), ['date,temperature', ...rows].join('\n'));
  const config = testConfig();
  app = await buildServer({ ...config, engine: { ...config.engine, floatSourcesDir: floatDir } });
});
afterAll(async () => {
  await app.close();
  fs.rmSync(floatDir, { recursive: true, force: true });
});

const post = (body: unknown, model = 'svc-global') => app.inject({ method: 'POST', url: `/forecast?model=${model}`, headers: AUTH, payload: body as object });

function days(from: string, count: number): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
}

/** Daily series with a weekly pattern and noise. */
function series(count: number, length: number, seed = 1) {
  const random = rng(seed);
  const index = days('2023-01-01', length);
  return Array.from({ length: count }, (_, k) => ({
    target: index.map((_, i) => 50 + 10 * k + 8 * Math.sin((2 * Math.PI * i) / 7) + 2 * (random() - 0.5)),
    index,
  }));
}

describe('svc-global takes every covariate kind', () => {
  const horizon = 7;
  test.each([
    ['holidays', { type: 'holidays', config: { country: 'US', smoothing_method: 'gaussian', window_size: 5, sigma: 2 } }],
    ['events', { type: 'events', config: { country: 'Global' } }],
    ['forex', { type: 'forex', config: { base: 'USD', target: 'GBP' } }],
    ['float', { type: 'float', config: { data_source: 'weather', column: 'temperature' } }],
    ['temporal_features', { type: 'temporal_features', config: { components: ['month'], seasonal_features: { day_of_week: 7 } } }],
  ])('generated: %s', async (_kind, covariate) => {
    const res = await post({ series: series(3, 120), horizon, freq: 'D', quantiles: [0.1, 0.9], covariates: [covariate] });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json().series[0][0];
    expect(p.prediction.mean).toHaveLength(horizon);
    p.prediction.mean.forEach((v: number, j: number) => {
      expect(p.prediction['0.1'][j]).toBeLessThanOrEqual(v);
      expect(p.prediction['0.9'][j]).toBeGreaterThanOrEqual(v);
    });
  });

  test('caller variables: historical, future, static, strings among them, and a context series', async () => {
    const s = series(3, 120);
    const body = {
      series: s.map((x, k) => ({
        ...x,
        hist_variables: { visits: x.target.map((v) => v * 2), weather: x.target.map((_, i) => (i % 3 === 0 ? 'rain' : 'sun')) },
        future_variables: { promo: Array.from({ length: 120 + horizon }, (_, i) => (i % 10 === 0 ? 1 : 0)) },
        static_variables: { region: k === 0 ? 'north' : 'south', size: k },
        only_as_context: k === 2,
      })),
      horizon,
      freq: 'D',
    };
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().series[2]).toEqual([]);
    expect(res.json().series[0][0].prediction.mean).toHaveLength(horizon);
  });
});

describe('a clear 422 when a covariate cannot be used', () => {
  const base = () => ({ series: series(3, 30), horizon: 3, freq: 'D' });
  test.each([
    [
      'wrong future length at its exact path',
      { ...base(), series: base().series.map((s, i) => (i === 2 ? { ...s, future_variables: { price: [1, 2] } } : s)) },
      'svc-global',
      'body.series[2].future_variables.price',
    ],
    [
      'a non-numeric covariate value',
      { ...base(), series: [{ ...base().series[0], hist_variables: { price: [null, ...Array(29).fill(1)] } }] },
      'svc-global',
      'body.series[0].hist_variables.price[0]',
    ],
    [
      'an unknown data source',
      { ...base(), covariates: [{ type: 'float', config: { data_source: 'nope', column: 'x' } }] },
      'svc-global',
      'body.covariates[0].config.data_source',
    ],
    [
      'an unknown column',
      { ...base(), covariates: [{ type: 'float', config: { data_source: 'weather', column: 'rain' } }] },
      'svc-global',
      'body.covariates[0].config.column',
    ],
    ['an unknown currency', { ...base(), covariates: [{ type: 'forex', config: { target: 'ABC' } }] }, 'svc-global', 'body.covariates[0].config.target'],
    ['generated covariates for a model without them', { ...base(), covariates: [{ type: 'holidays', config: { country: 'US' } }] }, 'aets', 'body.covariates'],
    [
      'strings for a model without them',
      { ...base(), series: [{ ...base().series[0], static_variables: { region: 'north' } }] },
      'aets',
      'body.series[0].static_variables',
    ],
  ])('%s', async (_name, body, model, expectedPath) => {
    const res = await post(body, model);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(expectedPath);
  });

  test('the messages list what exists and who can', async () => {
    const source = await post({ ...base(), covariates: [{ type: 'float', config: { data_source: 'nope', column: 'x' } }] });
    expect(source.json().errors[0].message).toContain('registered data sources: weather');
    const column = await post({ ...base(), covariates: [{ type: 'float', config: { data_source: 'weather', column: 'rain' } }] });
    expect(column.json().errors[0].message).toContain('numeric columns: temperature');
    const model = await post({ ...base(), covariates: [{ type: 'holidays', config: { country: 'US' } }] }, 'aets');
    expect(model.json().errors[0].message).toContain('svc-global');
  });
});

describe('no leakage: each forecast creation date sees only what was known at it', () => {
  test('historical variables and other series past a creation date do not change its forecast', async () => {
    const s = series(3, 90, 7);
    const fcd = 60;
    const body = (alter: boolean) => ({
      series: s.map((x, k) => ({
        target: alter && k === 1 ? x.target.map((v, i) => (i >= fcd ? v * 5 : v)) : x.target,
        index: x.index,
        hist_variables: { visits: x.target.map((v, i) => (alter && i >= fcd ? -1000 : v / 2)) },
        fcds: [fcd, 80],
      })),
      horizon: 5,
      freq: 'D',
      quantiles: [0.2, 0.8],
    });
    const [a, b] = await Promise.all([post(body(false)), post(body(true))]);
    expect(a.statusCode, a.body).toBe(200);
    expect(b.statusCode, b.body).toBe(200);
    for (const k of [0, 2]) expect(b.json().series[k][0].prediction).toEqual(a.json().series[k][0].prediction);
    // The later creation date does see the change.
    expect(b.json().series[0][1].prediction.mean).not.toEqual(a.json().series[0][1].prediction.mean);
  });
});

describe('a known holiday effect is learnt from the holidays covariate', () => {
  test.each(['svc-global', 'aarima'])('%s forecasts over Christmas and New Year clearly more accurately with it', async (model) => {
    const hd = new Holidays('US', { types: ['public'] });
    const holiday = new Set<string>();
    for (const y of [2021, 2022, 2023, 2024]) for (const h of hd.getHolidays(y)) if (h.type === 'public') holiday.add(h.date.slice(0, 10));
    const index = days('2021-01-01', 1099); // through 2024-01-03
    const horizon = 21;
    const random = rng(11);
    const data = Array.from({ length: 6 }, (_, k) => ({
      target: index.map((d, i) => (100 + 20 * k + 10 * Math.sin((2 * Math.PI * i) / 7) + 4 * (random() - 0.5)) * (holiday.has(d) ? 0.4 : 1)),
      index,
      fcds: [index.length - horizon],
    }));
    const mae = async (covariates: unknown[] | null) => {
      const res = await post({ series: data, horizon, freq: 'D', quantiles: [0.5], covariates }, model);
      expect(res.statusCode, res.body).toBe(200);
      const scores = res.json().series.map((s: { metrics: { mae: number } }[]) => s[0].metrics.mae);
      return scores.reduce((a: number, b: number) => a + b, 0) / scores.length;
    };
    const without = await mae(null);
    const withHolidays = await mae([{ type: 'holidays', config: { country: 'US' } }]);
    expect(withHolidays).toBeLessThan(0.6 * without);
  });
});
