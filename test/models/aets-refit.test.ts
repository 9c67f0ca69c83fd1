/**
 * `aets` between refits of a backtest: the kept model takes in new observations with its
 * parameters unchanged. The state update must be the fit's own recursion, continued.
 */
import { describe, expect, it } from 'vitest';
import { autoEtsForecast, fitAets, forecastWithAets } from '../../models/families/ets/aets.ts';
import { advanceState, finalState, runRecursion, Workspace, type Recursion } from '../../models/families/ets/ets-state-space.ts';
import { ADDITIVE, MULTIPLICATIVE, NONE } from '../../models/families/ets/ets-types.ts';

const seasonalSeries = (n: number) => Float64Array.from({ length: n }, (_, t) => 100 + 0.5 * t + 12 * Math.sin((2 * Math.PI * t) / 12) + ((t * 7) % 5));

/** The task at the first n values of y, `since` of them past a kept fit (0: the fit's own date). */
const refitTask = (y: Float64Array, horizon: number) => (n: number, since: number) => ({
  history: y.subarray(0, n),
  horizon,
  quantiles: [0.1, 0.9],
  seasonLength: 12,
  refit: { fcd: n - since, history: y.subarray(0, n - since), since },
});

describe('advanceState', () => {
  it.each([
    ['A,A,A', { error: ADDITIVE, trend: ADDITIVE, season: ADDITIVE, m: 12, alpha: 0.3, beta: 0.05, gamma: 0.1, phi: 0.95 }],
    ['M,N,M', { error: MULTIPLICATIVE, trend: NONE, season: MULTIPLICATIVE, m: 12, alpha: 0.4, beta: 0, gamma: 0.2, phi: 1 }],
    ['A,N,N', { error: ADDITIVE, trend: NONE, season: NONE, m: 1, alpha: 0.5, beta: 0, gamma: 0, phi: 1 }],
  ] as [string, Recursion][])('ETS(%s): continuing from the states after k observations equals one pass over all', (_, r) => {
    const y = seasonalSeries(60);
    const initial = Float64Array.from({ length: r.m }, (_, k) => (r.season === MULTIPLICATIVE ? 1 + 0.1 * Math.sin(k) : 5 * Math.sin(k)));
    const run = (values: Float64Array) => {
      const ws = new Workspace(r.m);
      ws.seasons.set(initial);
      runRecursion(values, r, 100, 0.5, ws);
      return finalState(ws, r);
    };
    const continued = advanceState(run(y.subarray(0, 41)), y.subarray(41), r);
    const whole = run(y);
    continued.forEach((v, i) => expect(v).toBeCloseTo(whole[i], 9));
  });
});

describe('aets with a kept fit', () => {
  const y = seasonalSeries(96);
  const task = refitTask(y, 12);

  it('at the refit date itself it is the fresh fit', () => {
    const fit = fitAets(task(80, 0));
    expect(forecastWithAets(fit, task(80, 0))).toEqual(autoEtsForecast(task(80, 0)));
  });

  it('later it keeps the model and parameters and forecasts from the states moved through the new observations', () => {
    const kept = fitAets(task(72, 0));
    const out = forecastWithAets(kept, task(84, 12));
    const moved = advanceState(kept.lastState, y.subarray(72, 84), { ...kept.spec, m: kept.m, ...kept.params });
    expect(out).toEqual(forecastWithAets({ ...kept, lastState: moved }, task(84, 0)));
    // Not the fresh fit at 84 (which may choose other parameters), yet close to it on smooth data.
    const fresh = autoEtsForecast(task(84, 0));
    out.mean.forEach((v, j) => expect(Math.abs(v - fresh.mean[j]) / fresh.mean[j]).toBeLessThan(0.1));
  });
});

describe('aets with a kept fallback fit', () => {
  // Six observations are too few for a likelihood fit: R's Holt-Winters fallback stands in.
  const y = seasonalSeries(48);
  const task = refitTask(y, 6);

  it('is not kept: a later history gets its own selection, finite, as a fresh fit', () => {
    const kept = fitAets(task(6, 0));
    expect(kept.lik).toBeNaN();
    const out = forecastWithAets(kept, task(40, 34));
    expect(out).toEqual(autoEtsForecast(task(40, 0)));
    for (const values of [out.mean, ...out.quantiles]) for (const v of values) expect(Number.isFinite(v)).toBe(true);
  });
});
