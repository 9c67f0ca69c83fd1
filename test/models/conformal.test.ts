/**
 * Conformal quantiles (models/numerics/conformal.ts) against statsforecast 2.1.1's ConformalIntervals on
 * AutoTheta (fixtures from tools/reference/theta-fixtures.py). Our `theta` reproduces AutoTheta's
 * means to 1e-15, so the conformal bounds, a deterministic function of those means at every
 * window, must agree to the same precision with the reference's quantile rule (`linear`): we
 * assert 1e-9 relative. The service's default rule (`unbiased`) is checked on its own below.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { conformalForecast } from '../../models/numerics/conformal.ts';
import { naive } from '../../models/families/naive/naive.ts';
import { theta } from '../../models/families/theta/theta.ts';
import { ModelInputError, type ForecastTask } from '../../models/contract/model-interface.ts';

interface ConformalCase {
  id: string;
  m: number;
  h: number;
  windows: number;
  y: number[];
  mean: number[];
  'lo-95': number[];
  'lo-80': number[];
  'hi-80': number[];
  'hi-95': number[];
}

const { conformal } = JSON.parse(readFileSync(new URL('../fixtures/theta/statsforecast.json', import.meta.url), 'utf8')) as { conformal: ConformalCase[] };
const forecastTheta = (task: ForecastTask) => theta.forecast(task);

describe('conformal quantiles against statsforecast ConformalIntervals', () => {
  it.each(conformal.map((c) => [`${c.id}, ${c.windows} windows`, c] as const))('%s', (_, c) => {
    const task: ForecastTask = { history: Float64Array.from(c.y), horizon: c.h, quantiles: [0.025, 0.1, 0.5, 0.9, 0.975], seasonLength: c.m };
    const out = conformalForecast(forecastTheta, task, c.windows, 'linear');
    const expected = [c['lo-95'], c['lo-80'], c.mean, c['hi-80'], c['hi-95']];
    expected.forEach((bound, k) => bound.forEach((v, j) => expect(Math.abs(out.quantiles[k][j] - v)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(v)))));
    c.mean.forEach((v, j) => expect(Math.abs(out.mean[j] - v)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(v))));
  });
});

describe('conformal quantiles', () => {
  const task = (history: number[], horizon: number, quantiles = [0.1, 0.9]): ForecastTask => ({
    history: Float64Array.from(history),
    horizon,
    quantiles,
    seasonLength: 1,
  });
  const forecastNaive = (t: ForecastTask) => naive.forecast(t);

  it('spread is the model errors at each step: naive on a line misses by h x slope', () => {
    // naive's error at step j on a line of slope 2 is 2 (j + 1) in every window.
    const line = Array.from({ length: 20 }, (_, t) => 2 * t);
    const out = conformalForecast(forecastNaive, task(line, 3), 4, 'linear');
    expect([...out.mean]).toEqual([38, 38, 38]);
    expect([...out.quantiles[0]]).toEqual([36, 34, 32]);
    expect([...out.quantiles[1]]).toEqual([40, 42, 44]);
  });

  it('the unbiased rule: the central interval of coverage k / (N + 1) is the mean plus or minus the k-th smallest absolute error', () => {
    // Errors 1, 2, 3, 4 at step 1 (windows oldest first), N = 4: the 80% interval (levels 0.1 and
    // 0.9) is +-4 (k = 4), the 60% one +-3, the 50% one +-2.5 (rank 2.5, between the 2nd and 3rd),
    // the 20% one +-1, the 10% one +-0.5 (between 0 and the smallest), the median the mean; beyond
    // the largest error, the largest.
    const y = [0, 0, 1, 1, 3, 3, 6, 6, 10, 10];
    const levels = [0.01, 0.1, 0.2, 0.25, 0.4, 0.45, 0.5, 0.55, 0.6, 0.75, 0.8, 0.9, 0.99];
    const out = conformalForecast(forecastNaive, task(y, 2, levels), 4);
    const expected = [-4, -4, -3, -2.5, -1, -0.5, 0, 0.5, 1, 2.5, 3, 4, 4].map((d) => 10 + d);
    out.quantiles.forEach((q, k) => expect(q[0]).toBeCloseTo(expected[k], 12));
  });

  it('uses as many windows as fit in a short history, and refuses fewer than two', () => {
    expect(() => conformalForecast(forecastNaive, task([1, 2, 3, 4, 5, 6], 3), 5)).toThrow(ModelInputError);
    expect(() => conformalForecast(forecastNaive, task([1, 2, 3, 4, 5, 6], 3), 5)).toThrow(/at least 7 observations/);
    expect(conformalForecast(forecastNaive, task([1, 2, 3, 4, 5, 6, 7], 3), 5).quantiles[0]).toHaveLength(3);
  });

  it('quantiles are ordered by level', () => {
    const y = Array.from({ length: 60 }, (_, t) => 10 + Math.sin(t) * 3 + (t % 7));
    const out = conformalForecast(forecastTheta, task(y, 6, [0.05, 0.25, 0.5, 0.75, 0.95]), 8);
    for (let j = 0; j < 6; j++) for (let k = 1; k < 5; k++) expect(out.quantiles[k][j]).toBeGreaterThanOrEqual(out.quantiles[k - 1][j]);
  });
});
