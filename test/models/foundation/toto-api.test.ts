/**
 * toto-2 through the service beyond what api.test.ts checks for every installed foundation model
 * (POST /forecast, warm-up, jobs): the beta interface, its horizon limit and covariate refusals as
 * 422s, and the not-installed answer.
 */
import { describe, test } from 'vitest';
import { requireInstalled, type Toto2Manifest } from '../../../models/families/foundation/model-store.ts';
import { forecastToto2 } from '../../../models/families/foundation/toto.ts';
import { FIXTURES_DIR } from './reference.ts';
import {
  dailyForecastBody,
  describeNotInstalled,
  expectBetaMatchesAdapter,
  expectCovariatesRefused,
  expectHorizonRefused,
  useFixtureServerWithRetail,
} from './service-helpers.ts';

describe('toto-2 installed in MODELS_DIR', () => {
  const server = useFixtureServerWithRetail();
  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    await expectBetaMatchesAdapter(server.app, 'toto-2', server.retail, forecastToto2);
  });

  test('a horizon past the positions of one pass is a 422 at the horizon field that names its limit', async () => {
    const { max_positions: positions, patch_size: p } = requireInstalled('toto-2', FIXTURES_DIR).manifest as Toto2Manifest;
    const most = (positions - 1) * p;
    await expectHorizonRefused(server.app, 'toto-2', { inRange: most, outOfRange: most + 1, limit: `at most ${most}` });
  });

  test('covariates are refused, never dropped', async () => {
    await expectCovariatesRefused(server.app, 'toto-2', dailyForecastBody());
  });
});

describeNotInstalled('toto-2', dailyForecastBody());
