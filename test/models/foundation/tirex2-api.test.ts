/**
 * tirex-2 through the service: installed from MODELS_DIR (the test fixture), warmed up, forecast
 * by POST /forecast, a job and the beta interface, covariates passed through as extra variates,
 * its native horizon enforced, and refused clearly when not installed.
 */
import { describe, expect, test } from 'vitest';
import { requireInstalled, type Tirex2Manifest } from '../../../models/families/foundation/model-store.ts';
import { forecastTirex2 } from '../../../models/families/foundation/tirex2.ts';
import { AUTH } from '../../api/helpers.ts';
import { FIXTURES_DIR } from './reference.ts';
import {
  dailyForecastBody,
  describeNotInstalled,
  expectBetaMatchesAdapter,
  expectCloseAtLevel,
  expectForecastsMatchAdapter,
  expectHorizonRefused,
  expectJobMatchesForecast,
  forecastOnFixture,
  hourlyForecastBody,
  hourlySeries,
  postForecast,
  useFixtureJobsStack,
  useRetailParquet,
} from './service-helpers.ts';

const server = useFixtureJobsStack('tirex2-api-test');
const retail = useRetailParquet();

/** 90 and 30 hours, 40 ahead: within the fixture's native horizon of 48. */
const request = hourlyForecastBody;
const post = (body: unknown) => postForecast(server.app, 'tirex-2', body);

describe('tirex-2 installed in MODELS_DIR', () => {
  test('GET /warmup loads its session', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/warmup?model=tirex-2', headers: AUTH });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ model: 'tirex-2', status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, mean and quantiles', async () => {
    const body = request();
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(200);
    const tasks = body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: 40, quantiles: body.quantiles, seasonLength: 24 }));
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tirex-2', forecastTirex2, tasks), body);
  });

  test('takes historical and future variables as extra variates, and generated covariates; refuses static ones', async () => {
    const plain = request();
    const future = (n: number) => Array.from({ length: n + 40 }, (_, i) => (i % 24 < 8 ? 1 : 0));
    const series = plain.series.map((s) => ({
      ...s,
      hist_variables: { load: s.target.map((v) => v / 2 + 1) },
      future_variables: { shift: future(s.target.length) },
    }));
    const body = request({ series });
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await forecastOnFixture(
      'tirex-2',
      forecastTirex2,
      series.map((s) => ({
        history: Float64Array.from(s.target),
        horizon: 40,
        quantiles: body.quantiles,
        seasonLength: 24,
        covariates: { hist: s.hist_variables, future: s.future_variables, static: {} },
      })),
    );
    res.json().series.forEach(([p]: { prediction: Record<string, number[]> }[], i: number) => {
      expectCloseAtLevel(p.prediction.mean, expected[i].mean, body.series[i].target);
      ['0.1', '0.5', '0.9'].forEach((k, j) => expectCloseAtLevel(p.prediction[k], expected[i].quantiles[j], body.series[i].target));
    });
    const without = (await post(plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);

    const generated = await post(request({ covariates: [{ type: 'temporal_features', config: { components: ['hour'] } }] }));
    expect(generated.statusCode, generated.body).toBe(200);
    const withStatic = await post(request({ series: plain.series.map((s) => ({ ...s, static_variables: { size: 3 } })) }));
    expect(withStatic.statusCode).toBe(422);
    expect(withStatic.json().errors[0].path).toBe('body.series[0].static_variables');
  });

  test('a horizon past the native one is a 422 at the horizon field, for forecasts, jobs and the beta interface', async () => {
    const { future_length: F } = requireInstalled('tirex-2', FIXTURES_DIR).manifest as Tirex2Manifest;
    await expectHorizonRefused(server.app, 'tirex-2', { inRange: F, outOfRange: F + 1, limit: `at most ${F}`, jobs: true });
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = request({ series: [{ ...hourlySeries(90), fcds: [60, 90] }, hourlySeries(30, 5), hourlySeries(50, 2)] });
    await expectJobMatchesForecast(server.app, 'tirex-2', body, [2, 1, 1]);
  }, 90_000);

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    await expectBetaMatchesAdapter(server.app, 'tirex-2', retail.file, forecastTirex2);
  });
});

describeNotInstalled('tirex-2', dailyForecastBody());
