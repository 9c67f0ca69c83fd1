/**
 * patchtst-fm through the service beyond what api.test.ts checks for every installed foundation
 * model (POST /forecast, warm-up, jobs): the beta interface, its horizon limit and covariate
 * refusals as 422s, and the not-installed answer.
 */
import { describe, test } from 'vitest';
import { forecastPatchTSTFM } from '../../../models/families/foundation/patchtst-fm.ts';
import { requireInstalled, type PatchTSTFMManifest } from '../../../models/families/foundation/model-store.ts';
import { FIXTURES_DIR } from './reference.ts';
import {
  dailyForecastBody,
  describeNotInstalled,
  expectBetaMatchesAdapter,
  expectCovariatesRefused,
  expectHorizonRefused,
  useFixtureServerWithRetail,
} from './service-helpers.ts';

describe('patchtst-fm installed in MODELS_DIR', () => {
  const server = useFixtureServerWithRetail();
  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    await expectBetaMatchesAdapter(server.app, 'patchtst-fm', server.retail, forecastPatchTSTFM);
  });

  test('a horizon past one pass is a 422 at the horizon field that names its limit', async () => {
    const { context_length: C } = requireInstalled('patchtst-fm', FIXTURES_DIR).manifest as PatchTSTFMManifest;
    await expectHorizonRefused(server.app, 'patchtst-fm', { inRange: C - 1, outOfRange: C, limit: `at most ${C - 1}` });
  });

  test('covariates are refused, never dropped', async () => {
    await expectCovariatesRefused(server.app, 'patchtst-fm', dailyForecastBody());
  });
});

describeNotInstalled('patchtst-fm', dailyForecastBody());
