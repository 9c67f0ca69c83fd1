/**
 * tabpfn-ts through the service: POST /forecast (with numeric and string known-future
 * covariates), warm-up, a job, the beta interface, and the not-installed answer. The adapter reads
 * the request's timestamps (calendar features), so the expected numbers come from tasks with the
 * times of the request's index and horizon.
 */
import { describe, expect, test } from 'vitest';
import { forecastTabPFNTS } from '../../../models/families/foundation/tabpfn-ts.ts';
import { AUTH } from '../../api/helpers.ts';
import {
  DAY,
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
  type TimedBody,
  useFixtureJobsStack,
  useRetailParquet,
} from './service-helpers.ts';

/** A text known-future variable over history and horizon: the shift of the hour. */
const shift = (n: number) => Array.from({ length: n }, (_, i) => ['night', 'day', 'day', 'evening'][Math.floor(i / 6) % 4]);
const flag = (n: number) => Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0));

describe('tabpfn-ts installed in MODELS_DIR', () => {
  const server = useFixtureJobsStack('tabpfn-ts-api-test');
  const retail = useRetailParquet();

  test('GET /warmup loads its session', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/warmup?model=tabpfn-ts', headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ model: 'tabpfn-ts', status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, median and quantiles', async () => {
    const body = hourlyForecastBody() as TimedBody;
    const res = await postForecast(server.app, 'tabpfn-ts', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabpfn-ts', forecastTabPFNTS, timedTasksOf(body, HOUR)), body);
  });

  test('string and numeric known-future covariates are feature columns: the adapter numbers, and they change the forecast', async () => {
    const plain = hourlyForecastBody() as TimedBody;
    const body = hourlyForecastBody({
      series: plain.series.map((s) => ({
        ...s,
        future_variables: { shift: shift(s.target.length + plain.horizon), flag: flag(s.target.length + plain.horizon) },
      })),
    }) as TimedBody;
    const res = await postForecast(server.app, 'tabpfn-ts', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabpfn-ts', forecastTabPFNTS, timedTasksOf(body, HOUR)), body);
    const without = (await postForecast(server.app, 'tabpfn-ts', plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);
  });

  test('past-only covariates are columns too (missing over the horizon), as in the reference frame; generated ones are taken', async () => {
    const plain = dailyForecastBody() as TimedBody;
    const body = { ...plain, series: plain.series.map((s) => ({ ...s, hist_variables: { load: s.target.map((v) => v * 2) } })) } as TimedBody;
    const res = await postForecast(server.app, 'tabpfn-ts', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabpfn-ts', forecastTabPFNTS, timedTasksOf(body, DAY)), body);
    const generated = await postForecast(
      server.app,
      'tabpfn-ts',
      dailyForecastBody({ covariates: [{ type: 'temporal_features', config: { components: ['day_of_week'] } }] }),
    );
    expect(generated.statusCode, generated.body).toBe(200);
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = hourlyForecastBody({ series: [{ ...hourlySeries(90), fcds: [60, 90] }, hourlySeries(30, 5)] });
    await expectJobMatchesForecast(server.app, 'tabpfn-ts', body, [2, 1]);
  }, 90_000);

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    await expectBetaMatchesAdapter(server.app, 'tabpfn-ts', retail.file, forecastTabPFNTS, { timed: true, expectClose: expectCloseAtLevel });
  });
});

describeNotInstalled('tabpfn-ts', dailyForecastBody());
