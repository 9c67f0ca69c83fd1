/**
 * patchtst-fm through the service beyond what api.test.ts checks for every installed foundation
 * model (POST /forecast, warm-up, jobs): the beta interface, its horizon limit and covariate
 * refusals as 422s, and the not-installed answer.
 */
import { describe, expect, test } from 'vitest';
import { forecastPatchTSTFM } from '../../../models/foundation/patchtst-fm.ts';
import { requireInstalled, type PatchTSTFMManifest } from '../../../models/foundation/store.ts';
import { FIXTURES_DIR } from './reference.ts';
import {
  dailyForecastBody,
  describeNotInstalled,
  expectBetaMatchesAdapter,
  expectCovariatesRefused,
  postForecast,
  useFixtureServerWithRetail,
} from './service-helpers.ts';

describe('patchtst-fm installed in MODELS_DIR', () => {
  const server = useFixtureServerWithRetail();
  const post = (body: unknown) => postForecast(server.app, 'patchtst-fm', body);

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    await expectBetaMatchesAdapter(server.app, 'patchtst-fm', server.retail, forecastPatchTSTFM);
  });

  test('a horizon past one pass is a 422 that names the horizon and its limit', async () => {
    const { context_length: C } = requireInstalled('patchtst-fm', FIXTURES_DIR).manifest as PatchTSTFMManifest;
    const ok = await post(dailyForecastBody({ horizon: C - 1 }));
    expect(ok.statusCode, ok.body).toBe(200);
    const res = await post(dailyForecastBody({ horizon: C }));
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('invalid_request');
    expect(res.json().detail).toContain(`horizon ${C} is out of range for patchtst-fm: it forecasts at most ${C - 1} steps`);
  });

  test('covariates are refused, never dropped', async () => {
    await expectCovariatesRefused(server.app, 'patchtst-fm', dailyForecastBody());
  });
});

describeNotInstalled('patchtst-fm', dailyForecastBody());
