/**
 * tirex through the service beyond what api.test.ts checks for every installed foundation model
 * (POST /forecast, warm-up, jobs): the beta interface, a horizon rolled out past the context,
 * covariate refusals as 422s, and the not-installed answer.
 */
import { describe, expect, test } from 'vitest';
import { requireInstalled, type TiRexManifest } from '../../../models/families/foundation/model-store.ts';
import { forecastTiRex } from '../../../models/families/foundation/tirex.ts';
import { FIXTURES_DIR } from './reference.ts';
import {
  dailyForecastBody,
  describeNotInstalled,
  expectBetaMatchesAdapter,
  expectCovariatesRefused,
  expectWithin1e4,
  forecastOnFixture,
  postForecast,
  useFixtureServerWithRetail,
} from './service-helpers.ts';

describe('tirex installed in MODELS_DIR', () => {
  const server = useFixtureServerWithRetail();

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    await expectBetaMatchesAdapter(server.app, 'tirex', server.retail, forecastTiRex);
  });

  test('a horizon past the context is rolled out as the reference does, with the adapter numbers', async () => {
    const { context_length: C } = requireInstalled('tirex', FIXTURES_DIR).manifest as TiRexManifest;
    const body = dailyForecastBody({ horizon: C + 10 });
    const res = await postForecast(server.app, 'tirex', body);
    expect(res.statusCode, res.body).toBe(200);
    const tasks = body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: C + 10, quantiles: [0.1, 0.5, 0.9], seasonLength: 7 }));
    const expected = await forecastOnFixture('tirex', forecastTiRex, tasks);
    res.json().series.forEach(([p]: { prediction: Record<string, number[]> }[], i: number) => {
      expectWithin1e4(p.prediction.mean, expected[i].mean);
      ['0.1', '0.5', '0.9'].forEach((k, j) => expectWithin1e4(p.prediction[k], expected[i].quantiles[j]));
    });
  });

  test('covariates are refused, never dropped', async () => {
    await expectCovariatesRefused(server.app, 'tirex', dailyForecastBody());
  });
});

describeNotInstalled('tirex', dailyForecastBody(), (bare) => {
  test('t0-alpha answers that this server has no adapter for it', async () => {
    const res = await postForecast(bare.app, 't0-alpha', dailyForecastBody());
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('model_unavailable');
    expect(res.json().detail).toContain('no adapter');
  });
});
