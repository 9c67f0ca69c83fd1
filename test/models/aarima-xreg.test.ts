import { expect, test } from 'vitest';
import { autoArimaForecast } from '../../models/families/arima/aarima.ts';
import { ModelInputError } from '../../models/contract/model-interface.ts';
import { AUTH, useTestServer } from '../api/helpers.ts';

const server = useTestServer();

/** y = 50 + 8 * promo + AR(1) noise: the promotion's effect is only learnable from the regressor. */
function promoSeries(n: number, h: number) {
  let state = 7;
  const random = () => (state = (state * 48271) % 2147483647) / 2147483647 - 0.5;
  const promo = Array.from({ length: n + h }, (_, t) => (t % 5 === 0 || t % 11 === 0 ? 1 : 0));
  let e = 0;
  const y = promo.map((p) => {
    e = 0.5 * e + random();
    return 50 + 8 * p + e;
  });
  return { y, promo };
}

const task = (history: number[], future: Record<string, (number | string)[]>, horizon: number) => ({
  history: Float64Array.from(history),
  horizon,
  quantiles: [0.1, 0.9],
  seasonLength: 1,
  covariates: { hist: {}, future, static: {} },
});

test('a future covariate enters as a regressor and carries its effect into the forecast', () => {
  const n = 120;
  const h = 10;
  const { y, promo } = promoSeries(n, h);
  const withPromo = autoArimaForecast(task(y.slice(0, n), { promo }, h));
  const without = autoArimaForecast(task(y.slice(0, n), {}, h));
  const err = (mean: Float64Array) => mean.reduce((s, m, i) => s + Math.abs(m - y[n + i]), 0) / h;
  expect(err(withPromo.mean)).toBeLessThan(0.5 * err(without.mean));
  // Promotion steps are forecast about 8 higher than the others.
  const promoted = withPromo.mean.filter((_, i) => promo[n + i] === 1);
  const plain = withPromo.mean.filter((_, i) => promo[n + i] === 0);
  expect(Math.min(...promoted) - Math.max(...plain)).toBeGreaterThan(5);
});

test('a column constant over the history is left out; a missing value is refused by name', () => {
  const { y, promo } = promoSeries(60, 5);
  const alone = autoArimaForecast(task(y.slice(0, 60), { promo }, 5));
  const withConstant = autoArimaForecast(task(y.slice(0, 60), { promo, flag: Array(65).fill(1) }, 5));
  expect(Array.from(withConstant.mean)).toEqual(Array.from(alone.mean));
  const gap: number[] = [...promo];
  gap[62] = NaN;
  expect(() => autoArimaForecast(task(y.slice(0, 60), { promo: gap }, 5))).toThrow(ModelInputError);
  expect(() => autoArimaForecast(task(y.slice(0, 60), { promo: gap }, 5))).toThrow(/'promo' has none at step 62/);
});

test('through the API: future variables are used, historical ones and forex are refused with the path', async () => {
  const { y, promo } = promoSeries(80, 6);
  const index = Array.from({ length: 80 }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 86_400_000).toISOString().slice(0, 10));
  const serie = { target: y.slice(0, 80), index, future_variables: { promo } };
  const ok = await server.app.inject({ method: 'POST', url: '/forecast?model=aarima', headers: AUTH, payload: { series: [serie], horizon: 6, freq: 'D' } });
  expect(ok.statusCode, ok.body).toBe(200);
  const hist = await server.app.inject({
    method: 'POST',
    url: '/forecast?model=aarima',
    headers: AUTH,
    payload: { series: [{ ...serie, hist_variables: { visits: y.slice(0, 80) } }], horizon: 6, freq: 'D' },
  });
  expect(hist.statusCode).toBe(422);
  expect(hist.json().errors[0].path).toBe('body.series[0].hist_variables');
  const forex = await server.app.inject({
    method: 'POST',
    url: '/forecast?model=aarima',
    headers: AUTH,
    payload: { series: [serie], horizon: 6, freq: 'D', covariates: [{ type: 'forex', config: { target: 'USD' } }] },
  });
  expect(forex.statusCode).toBe(422);
  expect(forex.json().errors[0].path).toMatch(/^body\.covariates/);
});
