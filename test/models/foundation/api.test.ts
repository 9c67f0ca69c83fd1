/**
 * Foundation models through the service: installed from MODELS_DIR (the test fixtures), warmed
 * up, forecast by POST /forecast and by a job, and refused clearly when missing or corrupt.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { forecastChronos2 } from '../../../models/families/foundation/chronos2.ts';
import { forecastPatchTSTFM } from '../../../models/families/foundation/patchtst-fm.ts';
import { forecastTimesFM2 } from '../../../models/families/foundation/timesfm2.ts';
import { forecastTimesFM25 } from '../../../models/families/foundation/timesfm2p5.ts';
import { forecastTiRex } from '../../../models/families/foundation/tirex.ts';
import { forecastToto2 } from '../../../models/families/foundation/toto.ts';
import { operatorHint } from '../../../models/contract/model-registry.ts';
import { AUTH } from '../../api/helpers.ts';
import { FIXTURES_DIR } from './reference.ts';
import {
  expectCloseAtLevel,
  expectForecastsMatchAdapter,
  expectJobMatchesForecast,
  forecastOnFixture,
  hourlyForecastBody,
  hourlySeries,
  postForecast,
  useFixtureJobsStack,
  useServerWithoutModels,
  withModels,
} from './service-helpers.ts';

const server = useFixtureJobsStack('foundation-api-test');

const request = hourlyForecastBody;
const post = (model: string, body: unknown) => postForecast(server.app, model, body);

/** What the adapter gives for the request's series, run in this thread on the same model. */
function direct(model: 'chronos-2' | 'timesfm-2p5' | 'timesfm-2' | 'patchtst-fm' | 'toto-2' | 'tirex', body: ReturnType<typeof request>) {
  const tasks = body.series.map((s) => ({ history: Float64Array.from(s.target), horizon: body.horizon, quantiles: body.quantiles, seasonLength: 24 }));
  if (model === 'chronos-2') return forecastOnFixture(model, forecastChronos2, tasks);
  if (model === 'timesfm-2') return forecastOnFixture(model, forecastTimesFM2, tasks);
  if (model === 'patchtst-fm') return forecastOnFixture(model, forecastPatchTSTFM, tasks);
  if (model === 'toto-2') return forecastOnFixture(model, forecastToto2, tasks);
  if (model === 'tirex') return forecastOnFixture(model, forecastTiRex, tasks);
  return forecastOnFixture(model, forecastTimesFM25, tasks);
}

describe.each(['chronos-2', 'timesfm-2p5', 'timesfm-2', 'patchtst-fm', 'toto-2', 'tirex'] as const)('%s installed in MODELS_DIR', (model) => {
  test('GET /warmup loads its session and reports the load time', async () => {
    const res = await server.app.inject({ method: 'GET', url: `/warmup?model=${model}`, headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ model, status: 'ready' });
    expect(res.json().load_time_ms).toBeGreaterThan(0);
  });

  test('POST /forecast answers the adapter forecast of this model, mean and quantiles', async () => {
    const body = request();
    const res = await post(model, body);
    expect(res.statusCode).toBe(200);
    const expected = await direct(model, body);
    expectForecastsMatchAdapter(res.json(), expected, body);
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = request({ series: [{ ...hourlySeries(90), fcds: [60, 90] }, hourlySeries(30, 5), hourlySeries(50, 2)] });
    // The backtest at 60 of 90 has the true values: metrics are computed.
    await expectJobMatchesForecast(server.app, model, body, [2, 1, 1]);
  }, 90_000);
});

describe('covariates', () => {
  const future = (n: number) => Array.from({ length: n + 40 }, (_, i) => (i % 24 < 8 ? 1 : 0));
  test('chronos-2 takes historical and future variables through its covariate inputs', async () => {
    const plain = request();
    const body = request({
      series: plain.series.map((s) => ({
        ...s,
        hist_variables: { load: s.target.map((v) => v / 2 + 1) },
        future_variables: { shift: future(s.target.length) },
      })),
    });
    const res = await post('chronos-2', body);
    expect(res.statusCode).toBe(200);
    const without = (await post('chronos-2', plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);
  });

  test.each(['timesfm-2p5', 'timesfm-2'])('%s takes future variables and generated covariates through its in-context regression', async (model) => {
    const plain = request();
    const body = request({ series: plain.series.map((s) => ({ ...s, future_variables: { shift: future(s.target.length) } })) });
    const res = await post(model, body);
    expect(res.statusCode, res.body).toBe(200);
    const without = (await post(model, plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);
    const generated = await post(model, request({ covariates: [{ type: 'temporal_features', config: { components: ['hour'] } }] }));
    expect(generated.statusCode, generated.body).toBe(200);
    // Text values are refused, as the API reference gives string covariates to tabpfn-ts and svc-global only.
    const shift = (n: number) => future(n).map((v) => (v ? 'day' : 'night'));
    const text = await post(model, request({ series: plain.series.map((s) => ({ ...s, future_variables: { shift: shift(s.target.length) } })) }));
    expect(text.statusCode).toBe(422);
    expect(text.json().errors[0].path).toBe('body.series[0].future_variables.shift');
  });

  test('chronos-2 refuses static variables; timesfm-2p5 refuses historical ones; nothing is dropped', async () => {
    const withStatic = request({ series: request().series.map((s) => ({ ...s, static_variables: { size: 3 } })) });
    const a = await post('chronos-2', withStatic);
    expect(a.statusCode).toBe(422);
    expect(a.json().errors[0].path).toBe('body.series[0].static_variables');
    const withHistorical = request({ series: request().series.map((s) => ({ ...s, hist_variables: { load: s.target } })) });
    const b = await post('timesfm-2p5', withHistorical);
    expect(b.statusCode).toBe(422);
    expect(b.json().errors[0].path).toBe('body.series[0].hist_variables');
  });
});

test("chronos-2 with is_global forecasts the series of one creation time jointly, as the pipeline's cross_learning", async () => {
  // Two series ending at the same hour, and a context series over the same hours.
  const long = hourlySeries(90);
  const tail = (s: ReturnType<typeof hourlySeries>, n: number, shift = 0) => ({
    target: s.target.slice(-n).map((v) => +(v * 0.5 + shift).toFixed(3)),
    index: s.index.slice(-n),
  });
  const series = [long, tail(long, 30, 7)];
  const body = (isGlobal: boolean, extra: object[] = []) => ({
    ...request(),
    series: [...series, ...extra],
    model_config: { model: 'chronos-2', config: { is_global: isGlobal } },
  });
  const [separate, joint, informed] = await Promise.all([
    post('chronos-2', body(false)),
    post('chronos-2', body(true)),
    post('chronos-2', body(true, [{ ...tail(long, 60, 3), only_as_context: true }])),
  ]);
  for (const res of [separate, joint, informed]) expect(res.statusCode, res.body).toBe(200);
  const means = (res: typeof joint) =>
    res
      .json()
      .series.slice(0, 2)
      .map((s: { prediction: { mean: number[] } }[]) => s[0].prediction.mean);

  const tasks = series.map((s) => ({ history: Float64Array.from(s.target), horizon: 40, quantiles: [0.1, 0.5, 0.9], seasonLength: 24 }));
  const expected = await forecastOnFixture('chronos-2', (run, manifest, t) => forecastChronos2(run, manifest, t, { crossLearning: true }), tasks);
  means(joint).forEach((m: number[], i: number) => expectCloseAtLevel(m, expected[i].mean, series[i].target));
  expect(means(joint)[0]).not.toEqual(means(separate)[0]);
  expect(informed.json().series[2]).toEqual([]); // the context series is fed, not forecast
  expect(means(informed)[0]).not.toEqual(means(joint)[0]);
});

describe('a foundation model that is not installed, or not intact', () => {
  const bare = useServerWithoutModels();

  test('answers 422 model_unavailable saying it is not installed, for forecasts and warm-up; the folder goes to the operator alone', async () => {
    for (const res of [
      await postForecast(bare.app, 'chronos-2', request()),
      await bare.app.inject({ method: 'GET', url: '/warmup?model=chronos-2', headers: AUTH }),
    ]) {
      expect(res.statusCode).toBe(422);
      expect(res.json().code).toBe('model_unavailable');
      expect(res.json().detail).toContain('its exported model is not installed on this server');
      expect(res.body).not.toContain(bare.dir);
      expect(res.json().detail).not.toContain('timesfm-2p5,'); // not offered as available either
    }
    const hint = operatorHint('chronos-2', withModels(bare.dir).engine.models);
    expect(hint).toContain(path.join(bare.dir, 'chronos-2'));
    expect(hint).toContain('manifest.json');
  });

  test('answers 422 for a corrupt ONNX file, never another model output', async () => {
    const folder = path.join(bare.dir, 'timesfm-2p5');
    fs.mkdirSync(folder, { recursive: true });
    fs.copyFileSync(path.join(FIXTURES_DIR, 'timesfm-2p5', 'manifest.json'), path.join(folder, 'manifest.json'));
    const bytes = fs.readFileSync(path.join(FIXTURES_DIR, 'timesfm-2p5', 'model.onnx'));
    bytes[100] ^= 0xff;
    fs.writeFileSync(path.join(folder, 'model.onnx'), bytes);
    const res = await postForecast(bare.app, 'timesfm-2p5', request());
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('model_unavailable');
    expect(res.json().detail).toContain('its installed export failed verification on this server');
    expect(res.body).not.toContain(bare.dir);
    expect(operatorHint('timesfm-2p5', withModels(bare.dir).engine.models)).toContain('corrupt');
  });

  test('other foundation names answer that this server has no adapter for them', async () => {
    const res = await post('t0-alpha', request());
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('model_unavailable');
    expect(res.json().detail).toContain('no adapter');
  });
});
