/**
 * model_config approximation of aarima through POST /forecast: "off" answers what R's
 * auto.arima(y, approximation = FALSE) forecasts (fixture from tools/reference/arima-fixtures.R),
 * "auto" (the default) what auto.arima(y) does, and a bad value is a 422 naming the field.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { AUTH, useTestServer } from './helpers.ts';

const server = useTestServer();

const fixture = JSON.parse(readFileSync(new URL('../fixtures/arima/exact-daily-n200.json', import.meta.url), 'utf8')) as {
  m: number;
  y: number[];
  forecast: { h: number; mean: number[] };
};

const index = fixture.y.map((_, t) => new Date(Date.UTC(2024, 0, 1) + t * 86_400_000).toISOString().slice(0, 10));
const request = (config: Record<string, unknown>) => ({
  series: [{ target: fixture.y, index }],
  horizon: fixture.forecast.h,
  freq: 'D',
  model_config: { model: 'aarima', config: { season_length: fixture.m, ...config } },
});
const post = (body: unknown) => server.app.inject({ method: 'POST', url: '/forecast?model=aarima', headers: AUTH, payload: body as object });

describe('POST /forecast?model=aarima with model_config approximation', () => {
  test('"off" forecasts as R auto.arima(approximation = FALSE); "auto" (the default) differs here', async () => {
    const off = await post(request({ approximation: 'off' }));
    expect(off.statusCode).toBe(200);
    const mean: number[] = off.json().series[0][0].prediction.mean;
    const scale = Math.max(...fixture.y) - Math.min(...fixture.y);
    mean.forEach((v, t) => expect(Math.abs(v - fixture.forecast.mean[t])).toBeLessThanOrEqual(1e-6 * scale));

    const auto = await post(request({}));
    expect(auto.statusCode).toBe(200);
    expect(auto.json().series[0][0].prediction.mean).not.toEqual(mean);
  });

  test('a value other than "auto" or "off" is a 422 naming the field', async () => {
    const res = await post(request({ approximation: false }));
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toContain('body.model_config.config.approximation');
  });
});
