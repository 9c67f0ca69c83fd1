/**
 * aarima keeping its selection between backtest dates (LocalModel.reuse), as
 * forecast::Arima(y, model = fit): the orders, the coefficients and the residual variance stay,
 * the later observations pass through the filter. R's side: tools/reference/arima-kept-fixtures.R.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { aarima, autoArimaForecast, fitAarima, forecastWithAarima } from '../../models/families/arima/aarima.ts';
import { fitArima } from '../../models/families/arima/arima-estimation.ts';
import { forecastModel, withDrift } from '../../models/families/arima/auto-arima-model.ts';
import type { ForecastTask } from '../../models/contract/model-interface.ts';
import { lcg } from './lcg.ts';

/** A monthly series: trend, a yearly cycle, AR(1) noise. */
function monthly(n: number, seed = 7): Float64Array {
  const random = lcg(seed);
  let e = 0;
  return Float64Array.from({ length: n }, (_, t) => {
    e = 0.6 * e + (random() - 0.5) * 4;
    return 50 + 0.4 * t + 6 * Math.sin((2 * Math.PI * t) / 12) + e;
  });
}

const task = (history: Float64Array, seasonLength = 12, covariates?: ForecastTask['covariates']): ForecastTask => ({
  history,
  horizon: 12,
  quantiles: [0.1, 0.5, 0.9],
  seasonLength,
  ...(covariates && { covariates }),
});

const close = (a: Float64Array, b: Float64Array, tolerance: number) => a.forEach((v, j) => expect(Math.abs(v - b[j])).toBeLessThan(tolerance));

describe('aarima keeps its selection between backtest dates', () => {
  test('on the history it was fitted on, the kept selection forecasts as a fresh one', () => {
    for (const [y, m] of [
      [monthly(96), 12],
      [monthly(60, 3), 1],
    ] as const) {
      const t = task(y, m);
      const fresh = autoArimaForecast(t);
      const kept = forecastWithAarima(fitAarima(t), t);
      close(kept.mean, fresh.mean, 1e-8);
      kept.quantiles.forEach((q, l) => close(q, fresh.quantiles[l], 1e-8));
    }
  });

  test('on a later history the orders and coefficients stay: the observations since only pass through the filter', () => {
    const y = monthly(120);
    const first = fitAarima(task(y.subarray(0, 96)));
    expect(first.model.kind).toBe('arima');
    if (first.model.kind !== 'arima') return;
    const later = forecastWithAarima(first, task(y));
    // The same model by hand: every coefficient fixed on all 120 points, then forecast.
    const { orders, coef, hasIntercept, method } = first.model.fit;
    const refiltered = fitArima(y, { orders, includeMean: hasIntercept, fixed: coef, method, xreg: first.model.drift ? withDrift(120, null) : null });
    expect(Array.from(refiltered.coef)).toEqual(Array.from(coef));
    expect(Array.from(later.mean)).toEqual(Array.from(forecastModel({ ...first.model, fit: refiltered, n: 120 }, 12).mean));
    const fresh = aarima.forecast(task(y));
    expect(Array.from(later.mean)).not.toEqual(Array.from(fresh.mean));
    // Both forecast the same process: within a fraction of its yearly swing.
    close(later.mean, fresh.mean, 3);
    later.quantiles[0].forEach((v, j) => expect(v).toBeLessThan(later.mean[j]));
    later.quantiles[2].forEach((v, j) => expect(v).toBeGreaterThan(later.mean[j]));
  });

  test('a history whose regressors changed since the fit, or a constant one, is selected afresh', () => {
    const y = monthly(120);
    const promo = (from: number) => ({ hist: {}, future: { promo: Array.from({ length: 132 }, (_, t) => (t >= from && t % 3 === 0 ? 1 : 0)) }, static: {} });
    // Constant over the first 96 points: left out of that fit; it varies over all 120.
    const fitted = fitAarima(task(y.subarray(0, 96), 12, promo(100)));
    expect(fitted.regressors).toEqual([]);
    const later = task(y, 12, promo(100));
    expect(Array.from(forecastWithAarima(fitted, later).mean)).toEqual(Array.from(autoArimaForecast(later).mean));
    const flat = task(new Float64Array(40).fill(5));
    const grown = task(Float64Array.from({ length: 60 }, (_, t) => (t < 40 ? 5 : t)));
    expect(Array.from(forecastWithAarima(fitAarima(flat), grown).mean)).toEqual(Array.from(autoArimaForecast(grown).mean));
  });
});

interface KeptCase {
  name: string;
  m: number;
  y: number[];
  fit_length: number;
  h: number;
  fit: { arma: number[]; sigma2: number };
  kept: { sigma2: number; mean: number[]; lower80: number[]; upper80: number[]; lower95: number[]; upper95: number[] };
}

const KEPT_CASES = JSON.parse(readFileSync(new URL('../fixtures/arima-kept/kept-models.json', import.meta.url), 'utf8')) as KeptCase[];

describe("aarima's kept selection against R's Arima(y, model = auto.arima(start of y))", () => {
  // The tolerances of the auto.arima fixtures (aarima.test.ts): the coefficients come from a search.
  test.each(KEPT_CASES.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const y = Float64Array.from(c.y);
    const fitted = fitAarima(task(y.subarray(0, c.fit_length), c.m));
    if (fitted.model.kind !== 'arima') throw new Error(`${c.name}: expected an ARIMA model`);
    const { p, q, P, Q, d, D } = fitted.model.fit.orders;
    const [rp, rq, rP, rQ, , rd, rD] = c.fit.arma;
    expect([p, q, P, Q, d, D]).toEqual([rp, rq, rP, rQ, rd, rD]);
    // R keeps the first fit's residual variance.
    expect(c.kept.sigma2).toBe(c.fit.sigma2);
    const out = forecastWithAarima(fitted, { history: y, horizon: c.h, seasonLength: c.m, quantiles: [0.025, 0.1, 0.5, 0.9, 0.975] });
    const range = Math.max(...c.y) - Math.min(...c.y);
    for (let t = 0; t < c.h; t++) {
      const width = c.kept.upper95[t] - c.kept.lower95[t];
      expect(Math.abs(out.mean[t] - c.kept.mean[t])).toBeLessThan(1e-6 * range);
      const bounds = [c.kept.lower95[t], c.kept.lower80[t], c.kept.mean[t], c.kept.upper80[t], c.kept.upper95[t]];
      bounds.forEach((b, k) => expect(Math.abs(out.quantiles[k][t] - b)).toBeLessThan(1e-5 * width));
    }
  });
});
