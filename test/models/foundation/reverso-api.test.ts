/**
 * reverso through the service: installed from MODELS_DIR (the test fixture), warmed up, forecast
 * by POST /forecast, a job and the beta interface with the adapter's numbers, covariates refused,
 * and the not-installed answer.
 */
import { describe, expect, test } from 'vitest';
import { forecastReverso } from '../../../models/families/foundation/reverso.ts';
import { AUTH } from '../../api/helpers.ts';
import {
  describeNotInstalled,
  expectBetaMatchesAdapter,
  expectCloseAtLevel,
  expectCovariatesRefused,
  expectForecastsMatchAdapter,
  expectJobMatchesForecast,
  forecastOnFixture,
  hourlySeries,
  postForecast,
  useFixtureJobsStack,
  useRetailParquet,
} from './service-helpers.ts';

/** 300 and 30 hours, 100 ahead: past the 48 steps of one pass, so the forecast is rolled out. */
const request = (extra: Record<string, unknown> = {}) => ({
  series: [hourlySeries(300), hourlySeries(30, 5)],
  horizon: 100,
  freq: 'H',
  quantiles: [0.1, 0.5, 0.9],
  ...extra,
});

describe('reverso installed in MODELS_DIR', () => {
  const server = useFixtureJobsStack('reverso-api-test');
  const retail = useRetailParquet();
  const post = (body: unknown) => postForecast(server.app, 'reverso', body);

  test('GET /warmup loads its session', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/warmup?model=reverso', headers: AUTH });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ model: 'reverso', status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, rolled out past 48 steps; every quantile is the point', async () => {
    const body = request();
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await forecastOnFixture(
      'reverso',
      forecastReverso,
      body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: 100, quantiles: body.quantiles, seasonLength: 24 })),
    );
    expectForecastsMatchAdapter(res.json(), expected, body, true); // every quantile is the point
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = request({ horizon: 40, series: [{ ...hourlySeries(300), fcds: [260, 300] }, hourlySeries(30, 5), hourlySeries(50, 2)] });
    await expectJobMatchesForecast(server.app, 'reverso', body, [2, 1, 1]);
  }, 90_000);

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    // Reverso forecasts a point, answered for every quantile; it is held to the float32 tolerance
    // at the series' level, as POST /forecast is above.
    await expectBetaMatchesAdapter(server.app, 'reverso', retail.file, forecastReverso, { pointOnly: true, expectClose: expectCloseAtLevel });
  });

  test('covariates are refused, never dropped', async () => {
    await expectCovariatesRefused(server.app, 'reverso', request());
  });
});

describeNotInstalled('reverso', request());
