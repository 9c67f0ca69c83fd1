/**
 * `mstl` against statsforecast 2.1.1's MSTL (fixtures from tools/reference/mstl-fixtures.py: M4
 * Hourly with periods 24 and 168, M4 Weekly with 52, simulated series with two and three periods,
 * one period, an odd period). The decomposition is the reference's loess arithmetic replayed, so
 * trend, seasonal components and the deseasonalised series agree to ~1e-12 (asserted 1e-9).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { aarima } from '../../models/families/arima/aarima.ts';
import { aets } from '../../models/families/ets/aets.ts';
import { fitMstl, forecastWithMstl, mstl } from '../../models/families/mstl/mstl.ts';
import { mstlDecompose, seasonalForecast, usablePeriods } from '../../models/families/mstl/mstl-decomposition.ts';
import { ModelInputError } from '../../models/contract/model-interface.ts';

interface Case {
  id: string;
  periods: number[];
  h: number;
  y: number[];
  trend: number[];
  seasonals: number[][];
  adjusted: number[];
  seasonal_forecast: number[];
}

const { cases } = JSON.parse(readFileSync(new URL('../fixtures/mstl/statsforecast.json', import.meta.url), 'utf8')) as { cases: Case[] };

const expectClose = (actual: ArrayLike<number>, expected: number[], rel = 1e-9) => {
  expect(actual.length).toBe(expected.length);
  const scale = Math.max(1, ...expected.map(Math.abs));
  for (let i = 0; i < expected.length; i++) expect(Math.abs(actual[i] - expected[i])).toBeLessThanOrEqual(rel * scale);
};

describe('mstl against statsforecast MSTL', () => {
  it.each(cases.map((c) => [c.id, c] as const))('%s: same components, deseasonalised series and seasonal forecast', (_, c) => {
    const d = mstlDecompose(Float64Array.from(c.y), c.periods);
    expect(d.seasonals.map((s) => s.period)).toEqual([...c.periods].sort((a, b) => a - b));
    d.seasonals.forEach((s, i) => expectClose(s.values, c.seasonals[i]));
    expectClose(d.trend, c.trend);
    expectClose(d.adjusted, c.adjusted);
    expectClose(seasonalForecast(d, c.h), c.seasonal_forecast);
  });

  it('forecasts the deseasonalised series with non-seasonal aets (or aarima) and adds the seasonal forecast', () => {
    const c = cases.find((k) => k.id === 'sim-hourly-two-seasons')!;
    const history = Float64Array.from(c.y);
    const task = { history, horizon: c.h, quantiles: [0.1, 0.9], seasonLength: 24, seasonLengths: c.periods };
    const out = mstl.forecast(task);
    const rest = aets.forecast({ history: Float64Array.from(c.adjusted), horizon: c.h, quantiles: [0.1, 0.9], seasonLength: 1 });
    expectClose(
      out.mean,
      Array.from(rest.mean, (v, j) => v + c.seasonal_forecast[j]),
      1e-7,
    );
    expectClose(
      out.quantiles[1],
      Array.from(rest.quantiles[1], (v, j) => v + c.seasonal_forecast[j]),
      1e-7,
    );
    const withArima = mstl.forecast({ ...task, options: { trendModel: 'aarima' } });
    const arimaRest = aarima.forecast({ history: Float64Array.from(c.adjusted), horizon: c.h, quantiles: [0.1, 0.9], seasonLength: 1 });
    expectClose(
      withArima.mean,
      Array.from(arimaRest.mean, (v, j) => v + c.seasonal_forecast[j]),
      1e-7,
    );
    // The weekly cycle matters here: one period alone forecasts differently.
    const dailyOnly = mstl.forecast({ ...task, seasonLengths: [24] });
    expect(Math.max(...dailyOnly.mean.map((v, j) => Math.abs(v - out.mean[j])))).toBeGreaterThan(1);
  });

  it('leaves out periods that do not fit twice, and forecasts without a season when none does', () => {
    expect(usablePeriods([168, 24, 24, 1, 7.2], 300)).toEqual([7, 24]);
    const y = Float64Array.from({ length: 30 }, (_, t) => 10 + t + (t % 3));
    expect(mstlDecompose(y, [24]).seasonals).toEqual([]);
    const out = mstl.forecast({ history: y, horizon: 4, quantiles: [0.5], seasonLength: 24 });
    const plain = aets.forecast({ history: y, horizon: 4, quantiles: [0.5], seasonLength: 1 });
    expect([...out.mean]).toEqual([...plain.mean]);
  });

  it('refuses a history of fewer than 2 observations', () => {
    expect(() => mstl.forecast({ history: Float64Array.of(1), horizon: 2, quantiles: [], seasonLength: 24 })).toThrow(ModelInputError);
  });
});

describe('mstl reuse between backtest refits and ensemble windows', () => {
  const c = cases.find((k) => k.id === 'sim-hourly-two-seasons')!;
  const y = Float64Array.from(c.y);
  const at = (n: number, quantiles: number[] = [0.1, 0.9]) => ({
    history: y.subarray(0, n),
    horizon: c.h,
    quantiles,
    seasonLength: 24,
    seasonLengths: c.periods,
  });
  const fitEnd = y.length - 60;
  const kept = fitMstl(at(fitEnd))!;

  it('a fit kept on the same history forecasts exactly as a fresh forecast', () => {
    expect(forecastWithMstl(kept, at(fitEnd))).toEqual(mstl.forecast(at(fitEnd)));
    expect(mstl.reuse!.forecast(mstl.reuse!.fit(at(fitEnd)), at(fitEnd))).toEqual(mstl.forecast(at(fitEnd)));
  });

  it('a later history keeps the cycles and the trend fit: the new observations less the cycles move the trend states', () => {
    const since = 30;
    const later = { ...at(fitEnd + since), refit: { fcd: fitEnd, history: y.subarray(0, fitEnd), since } };
    const reused = forecastWithMstl(kept, later);
    const fresh = mstl.forecast(at(fitEnd + since));
    expect(reused.mean).not.toEqual(fresh.mean);
    // By hand: the decomposition at the fit, its last cycles continued past it.
    const d = mstlDecompose(y.subarray(0, fitEnd), c.periods);
    const cycles = (t: number) => d.seasonals.reduce((sum, { period, values }) => sum + values[fitEnd - period + ((t - fitEnd) % period)], 0);
    const adjusted = Float64Array.from({ length: fitEnd + since }, (_, t) => (t < fitEnd ? d.adjusted[t] : y[t] - cycles(t)));
    const trendFit = aets.reuse!.fit({ history: d.adjusted, horizon: c.h, quantiles: [], seasonLength: 1 });
    const rest = aets.reuse!.forecast(trendFit, {
      history: adjusted,
      horizon: c.h,
      quantiles: [0.1, 0.9],
      seasonLength: 1,
      refit: { fcd: fitEnd, history: d.adjusted, since },
    });
    expectClose(
      reused.mean,
      Array.from(rest.mean, (v, j) => v + cycles(fitEnd + since + j)),
      1e-12,
    );
    expectClose(
      reused.quantiles[0],
      Array.from(rest.quantiles[0], (v, j) => v + cycles(fitEnd + since + j)),
      1e-12,
    );
  });

  it('fits afresh where the history does not extend the fit; an aarima trend keeps its selection too', () => {
    const shorter = { ...at(fitEnd - 10), refit: { fcd: fitEnd, history: y.subarray(0, fitEnd), since: 5 } };
    expect(forecastWithMstl(kept, shorter)).toEqual(mstl.forecast(at(fitEnd - 10)));
    expect(forecastWithMstl(null, { ...at(fitEnd + 60), refit: { fcd: fitEnd, history: y.subarray(0, fitEnd), since: 60 } })).toEqual(
      mstl.forecast(at(fitEnd + 60)),
    );
    // aarima keeps its selection (docs/decisions/086-aarima-keeps-its-selection.md): on the history
    // it was fitted on, as a fresh forecast up to the filter's rounding.
    const arima = { ...at(fitEnd), options: { trendModel: 'aarima' } };
    const keptArima = fitMstl(arima);
    expect(keptArima).not.toBeNull();
    expectClose(forecastWithMstl(keptArima, arima).mean, Array.from(mstl.forecast(arima).mean), 1e-9);
  });

  it('fits afresh where the later history fits a season twice and the fit had none; never returns NaN from a short fit', () => {
    const monthly = Float64Array.from({ length: 60 }, (_, t) => 1000 + 3 * t + 40 * Math.sin((2 * Math.PI * t) / 12) + ((t * 7) % 5));
    const task = (n: number, since = 0) => ({
      history: monthly.subarray(0, n),
      horizon: 6,
      quantiles: [0.1, 0.9],
      seasonLength: 12,
      ...(since > 0 && { refit: { fcd: n - since, history: monthly.subarray(0, n - since), since } }),
    });
    // Six observations: no cycle of 12, and a trend too short for a likelihood fit.
    const short = fitMstl(task(6))!;
    expect(short.cycles).toEqual([]);
    const later = forecastWithMstl(short, task(48, 42));
    expect(later).toEqual(mstl.forecast(task(48)));
    for (const values of [later.mean, ...later.quantiles]) for (const v of values) expect(Number.isFinite(v)).toBe(true);
  });
});
