/**
 * The Moirai adapters (moirai-2, moirai-moe) through the service: installed from MODELS_DIR (the test fixtures), warmed
 * up, forecast by POST /forecast, a job and the beta interface, covariates passed through, and
 * refused clearly when not installed.
 */
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { BetaResponse } from '../../../engine/beta/response.ts';
import { forecastMoiraiMoE } from '../../../models/families/foundation/moirai-moe.ts';
import { forecastMoirai2 } from '../../../models/families/foundation/moirai2.ts';
import { requireInstalled, type Moirai2Manifest, type MoiraiMoEManifest } from '../../../models/families/foundation/model-store.ts';
import type { ForecastTask } from '../../../models/contract/model-interface.ts';
import { AUTH } from '../../api/helpers.ts';
import { filePart, postBeta, queryPart, tempDir, writeParquet } from '../../beta/helpers.ts';
import { FIXTURES_DIR } from './reference.ts';
import {
  describeNotInstalled,
  expectCloseAtLevel,
  expectForecastsMatchAdapter,
  expectHorizonRefused,
  expectJobMatchesForecast,
  forecastOnFixture,
  hourlyForecastBody,
  hourlySeries,
  postForecast,
  useFixtureJobsStack,
} from './service-helpers.ts';

type Model = 'moirai-2' | 'moirai-moe';

const server = useFixtureJobsStack('moirai-api-test');
const work = tempDir('moirai-api-');

/** 90 and 30 hours, 40 ahead: past the native horizon of the fixtures. */
const request = hourlyForecastBody;
const post = (model: string, body: unknown) => postForecast(server.app, model, body);

/** What the model's adapter gives for these tasks, run in this thread on the installed fixture. */
const direct = (model: Model, tasks: ForecastTask[]) =>
  model === 'moirai-moe' ? forecastOnFixture(model, forecastMoiraiMoE, tasks) : forecastOnFixture(model, forecastMoirai2, tasks);

describe.each(['moirai-2', 'moirai-moe'] as const)('%s installed in MODELS_DIR', (model) => {
  test('GET /warmup loads its session', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/warmup?model=${model}`, headers: AUTH });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ model, status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, mean and quantiles, past its native horizon', async () => {
    const body = request();
    const res = await post(model, body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await direct(
      model,
      body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: 40, quantiles: body.quantiles, seasonLength: 24 })),
    );
    expectForecastsMatchAdapter(res.json(), expected, body);
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
    const res = await post(model, body);
    expect(res.statusCode, res.body).toBe(200);
    const expected = await direct(
      model,
      series.map((s) => ({
        history: Float64Array.from(s.target),
        horizon: 40,
        quantiles: body.quantiles,
        seasonLength: 24,
        covariates: { hist: s.hist_variables, future: s.future_variables, static: {} },
      })),
    );
    res
      .json()
      .series.forEach(([p]: { prediction: Record<string, number[]> }[], i: number) =>
        expectCloseAtLevel(p.prediction.mean, expected[i].mean, body.series[i].target),
      );
    const without = (await post(model, plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);

    const generated = await post(model, request({ covariates: [{ type: 'temporal_features', config: { components: ['hour'] } }] }));
    expect(generated.statusCode, generated.body).toBe(200);
    const withStatic = await post(model, request({ series: plain.series.map((s) => ({ ...s, static_variables: { size: 3 } })) }));
    expect(withStatic.statusCode).toBe(422);
    expect(withStatic.json().errors[0].path).toBe('body.series[0].static_variables');
  });

  test('a horizon past its time ids is a 422 at the horizon field, for forecasts, jobs and the beta interface', async () => {
    const { context_length: C, patch_size: P, max_time_tokens: T } = requireInstalled(model, FIXTURES_DIR).manifest as Moirai2Manifest | MoiraiMoEManifest;
    const most = (T - C / P) * P;
    await expectHorizonRefused(server.app, model, { inRange: most, outOfRange: most + 1, limit: `at most ${most}`, jobs: true });
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = request({ series: [{ ...hourlySeries(90), fcds: [60, 90] }, hourlySeries(30, 5), hourlySeries(50, 2)] });
    await expectJobMatchesForecast(server.app, model, body, [2, 1, 1]);
  }, 90_000);

  test('the beta interface forecasts a Parquet upload with the adapter numbers', async () => {
    const days = 70;
    const file = await writeParquet(
      path.join(work, `weekly-${model}.parquet`),
      `SELECT DATE '2024-01-01' + d::INTEGER AS ts, 50 + 10 * (d % 7) + (d % 3) * 0.5 AS y FROM range(${days}) r(d)`,
    );
    const query = {
      input: { source: { uri: 'inline://w' }, columns: { ts: { kind: 'time', frequency: '1d' }, y: { kind: 'target', aggregate: 'mean' } } },
      prediction_length: '1w',
      quantiles: [0.1, 0.9],
    };
    const res = await postBeta(server.app, [queryPart(query), filePart('w', file)], model);
    expect(res.statusCode, res.body).toBe(200);
    const quantiles = BetaResponse.parse(res.json()).data.targets.y.quantiles;
    const history = Array.from({ length: days }, (_, d) => 50 + 10 * (d % 7) + (d % 3) * 0.5);
    const [expected] = await direct(model, [{ history: Float64Array.from(history), horizon: 7, quantiles: [0.1, 0.9], seasonLength: 7 }]);
    expectCloseAtLevel(quantiles.mean as number[], expected.mean, history);
    expectCloseAtLevel(quantiles['0.1'] as number[], expected.quantiles[0], history);
    expectCloseAtLevel(quantiles['0.9'] as number[], expected.quantiles[1], history);
  });
});

for (const model of ['moirai-2', 'moirai-moe'] as const) describeNotInstalled(model, request());
