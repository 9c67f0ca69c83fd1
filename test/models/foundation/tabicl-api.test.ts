/**
 * tabicl through the service: POST /forecast (with and without known-future covariates), warm-up,
 * a job, the beta interface, refusals of past-only covariates, and the not-installed answer. The
 * adapter reads the request's timestamps (calendar features), so the expected numbers come from
 * tasks with the times of the request's index and horizon.
 */
import { describe, expect, test } from 'vitest';
import { forecastTabICL } from '../../../models/families/foundation/tabicl.ts';
import { AUTH } from '../../api/helpers.ts';
import {
  dailyForecastBody,
  describeNotInstalled,
  expectBetaMatchesAdapter,
  expectCloseAtLevel,
  expectForecastsMatchAdapter,
  expectJobMatchesForecast,
  forecastOnFixture,
  HOUR,
  hourlyForecastBody,
  hourlySeries,
  postForecast,
  timedTasksOf,
  useFixtureJobsStack,
  useRetailParquet,
} from './service-helpers.ts';

/** A known-future variable over history and horizon: a flag every third hour. */
const flag = (n: number) => Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0));

describe('tabicl installed in MODELS_DIR', () => {
  const server = useFixtureJobsStack('tabicl-api-test');
  const retail = useRetailParquet();

  test('GET /warmup loads its session', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/warmup?model=tabicl', headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ model: 'tabicl', status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, mean and quantiles', async () => {
    const body = hourlyForecastBody();
    const res = await postForecast(server.app, 'tabicl', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabicl', forecastTabICL, timedTasksOf(body, HOUR)), body);
  });

  test('known-future covariates are feature columns: the adapter numbers, and they change the forecast', async () => {
    const plain = hourlyForecastBody();
    const body = hourlyForecastBody({
      series: plain.series.map((s) => ({ ...s, future_variables: { every_third_hour: flag(s.target.length + plain.horizon) } })),
    });
    const res = await postForecast(server.app, 'tabicl', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabicl', forecastTabICL, timedTasksOf(body, HOUR)), body);
    const without = (await postForecast(server.app, 'tabicl', plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);
  });

  test('generated covariates are taken; past-only ones are refused, never dropped', async () => {
    const generated = await postForecast(
      server.app,
      'tabicl',
      dailyForecastBody({ covariates: [{ type: 'temporal_features', config: { components: ['day_of_week'] } }] }),
    );
    expect(generated.statusCode, generated.body).toBe(200);
    const body = dailyForecastBody();
    const res = await postForecast(server.app, 'tabicl', { ...body, series: body.series.map((s) => ({ ...s, hist_variables: { load: s.target } })) });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.series[0].hist_variables');
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = hourlyForecastBody({ series: [{ ...hourlySeries(90), fcds: [60, 90] }, hourlySeries(30, 5)] });
    // The backtest at 60 of 90 has the true values: metrics are computed.
    await expectJobMatchesForecast(server.app, 'tabicl', body, [2, 1]);
  }, 90_000);

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    await expectBetaMatchesAdapter(server.app, 'tabicl', retail.file, forecastTabICL, { timed: true, expectClose: expectCloseAtLevel });
  });
});

describeNotInstalled('tabicl', dailyForecastBody());
