import net, { type AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { ForecastResponseSchema } from '../../engine/response-schema.ts';
import { conformalForecast } from '../../models/numerics/conformal.ts';
import { fitTheta, forecastWithTheta, theta } from '../../models/families/theta/theta.ts';
import { aarima, fitAarima, forecastWithAarima } from '../../models/families/arima/aarima.ts';
import { AUTH, dailyRequest, hourlySeries, useTestServer } from './helpers.ts';

const server = useTestServer();

const post = (body: unknown, query = 'model=naive', headers: Record<string, string> = AUTH) =>
  server.app.inject({ method: 'POST', url: `/forecast?${query}`, headers, payload: body as object });

describe('POST /forecast answers the reference response shape', () => {
  test('one series without fcds yields series[0][0] with mean, quantile keys and the continued index', async () => {
    const res = await post(dailyRequest({ quantiles: [0.1, 0.5, 0.95] }));
    expect(res.statusCode).toBe(200);
    const body = ForecastResponseSchema.parse(res.json());
    expect(body.status).toBe('completed');
    expect(body.series).toHaveLength(1);
    const p = body.series![0][0];
    expect(Object.keys(p.prediction)).toEqual(['mean', '0.1', '0.5', '0.95']);
    expect(p.prediction.mean).toEqual([9, 9, 9]);
    expect(p.index).toEqual(['2024-01-11', '2024-01-12', '2024-01-13']);
    expect(p.metrics).toBeNull();
    expect(p.prediction['0.1'][0]).toBeLessThan(9);
    expect(p.prediction['0.95'][0]).toBeGreaterThan(9);
  });

  test('default quantiles are 0.1, 0.9, 0.4, 0.5', async () => {
    const res = await post(dailyRequest());
    expect(Object.keys(res.json().series[0][0].prediction)).toEqual(['mean', '0.1', '0.9', '0.4', '0.5']);
  });

  test('numeric strings are accepted as target values', async () => {
    const req = dailyRequest();
    (req.series[0] as { target: unknown[] }).target = req.series[0].target.map(String);
    const res = await post(req);
    expect(res.statusCode).toBe(200);
    expect(res.json().series[0][0].prediction.mean).toEqual([9, 9, 9]);
  });

  test('fcds backtest: history of the first k values, index from the input, metrics over known steps', async () => {
    const res = await post(dailyRequest({ quantiles: [0.5] }, { fcds: [5, 9, 10] }));
    const [a, b, c] = res.json().series[0];
    // k=5: last known value 5; actual steps 7, 6, 8.
    expect(a.prediction.mean).toEqual([5, 5, 5]);
    expect(a.index).toEqual(['2024-01-06', '2024-01-07', '2024-01-08']);
    expect(a.metrics.mae).toBeCloseTo((2 + 1 + 3) / 3, 12);
    expect(a.metrics.wape).toBeCloseTo(6 / 21, 12);
    expect(a.metrics.scaled_bias).toBeCloseTo(-6 / 21, 12);
    expect(a.metrics.crps).toBeCloseTo(2, 12);
    expect(a.metrics.mape).toBeCloseTo((2 / 7 + 1 / 6 + 3 / 8) / 3, 12);
    // k=9: one known step (9), then the index continues past the end.
    expect(b.index).toEqual(['2024-01-10', '2024-01-11', '2024-01-12']);
    expect(b.metrics.mae).toBeCloseTo(2, 12);
    // k=10 = the end: nothing to score.
    expect(c.metrics).toBeNull();
  });

  test('context limits the history each forecast sees', async () => {
    const withContext = (await post(dailyRequest({ context: 3, quantiles: [0.9] }))).json().series[0][0];
    const trimmed = (await post(dailyRequest({ quantiles: [0.9] }, { target: [8, 7, 9], index: ['2024-01-08', '2024-01-09', '2024-01-10'] }))).json()
      .series[0][0];
    expect(withContext.prediction['0.9']).toEqual(trimmed.prediction['0.9']);
    const full = (await post(dailyRequest({ quantiles: [0.9] }))).json().series[0][0];
    expect(full.prediction['0.9']).not.toEqual(trimmed.prediction['0.9']);
  });

  test('only_as_context series get an empty entry', async () => {
    const req = dailyRequest();
    req.series.push({ ...req.series[0], only_as_context: true } as (typeof req.series)[0]);
    const res = await post(req);
    expect(res.json().series[1]).toEqual([]);
    expect(res.json().series[0]).toHaveLength(1);
  });

  test('model_config season_length makes naive seasonal', async () => {
    const res = await post(dailyRequest({ model_config: { model: 'naive', config: { season_length: 3 } } }));
    expect(res.json().series[0][0].prediction.mean).toEqual([8, 7, 9]);
  });

  test('seasonal-naive defaults its season to the frequency (7 for daily)', async () => {
    const res = await post(dailyRequest(), 'model=seasonal-naive');
    expect(res.json().series[0][0].prediction.mean).toEqual([6, 5, 7]);
  });

  test('theta is served: the model core forecast, a backtest with metrics, model_config season_length', async () => {
    const [serie] = hourlySeries(1, 120);
    const res = await post({ series: [{ ...serie, fcds: [96, 120] }], horizon: 24, freq: 'H', quantiles: [0.1, 0.9] }, 'model=theta');
    expect(res.statusCode).toBe(200);
    const [atFcd, latest] = res.json().series[0];
    const direct = theta.forecast({ history: Float64Array.from(serie.target.slice(0, 120)), horizon: 24, quantiles: [0.1, 0.9], seasonLength: 24 });
    expect(latest.prediction.mean).toEqual([...direct.mean]);
    expect(latest.prediction['0.1']).toEqual([...direct.quantiles[0]]);
    expect(atFcd.metrics.mae).toBeGreaterThan(0);
    const configured = await post(dailyRequest({ model_config: { model: 'theta', config: { season_length: 2 } } }), 'model=theta');
    expect(configured.statusCode).toBe(200);
  });

  test('theta refuses a history shorter than 4 observations, naming the series', async () => {
    const res = await post(dailyRequest({}, { target: [1, 2, 3], index: ['2024-01-01', '2024-01-02', '2024-01-03'] }), 'model=theta');
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0]).toMatchObject({ path: 'body.series[0]' });
    expect(res.json().errors[0].message).toMatch(/at least 4 observations/);
  });

  test('model_config intervals: conformal gives conformal quantiles around the same mean, in backtests too', async () => {
    const [serie] = hourlySeries(1, 120);
    const body = (config: Record<string, unknown>) => ({
      series: [{ ...serie, fcds: [100, 120] }],
      horizon: 12,
      freq: 'H',
      quantiles: [0.1, 0.9],
      model_config: { model: 'theta', config },
    });
    const own = (await post(body({}), 'model=theta')).json().series[0];
    const res = await post(body({ intervals: 'conformal', conformal_windows: 4 }), 'model=theta');
    expect(res.statusCode).toBe(200);
    const conformal = res.json().series[0];
    const history = Float64Array.from(serie.target.slice(0, 120));
    const direct = conformalForecast((t) => theta.forecast(t), { history, horizon: 12, quantiles: [0.1, 0.9], seasonLength: 24 }, 4);
    expect(conformal[1].prediction.mean).toEqual(own[1].prediction.mean);
    expect(conformal[1].prediction['0.9']).toEqual([...direct.quantiles[1]]);
    expect(conformal[1].prediction['0.9']).not.toEqual(own[1].prediction['0.9']);
    expect(conformal[0].metrics.crps).not.toBe(own[0].metrics.crps);
  });

  test('conformal quantiles on a history too short for two windows: 422 naming the series; bad settings name the field', async () => {
    // 10 observations, horizon 5: two 5-step windows leave nothing to train on.
    const short = await post(dailyRequest({ horizon: 5, model_config: { model: 'naive', config: { intervals: 'conformal' } } }), 'model=naive');
    expect(short.statusCode).toBe(422);
    expect(short.json().errors[0].path).toBe('body.series[0]');
    expect(short.json().errors[0].message).toMatch(/at least 11 observations/);
    const bad = await post(dailyRequest({ model_config: { model: 'naive', config: { intervals: 'bootstrap' } } }), 'model=naive');
    expect(bad.json().errors[0].path).toBe('body.model_config.config.intervals');
    const few = await post(dailyRequest({ model_config: { model: 'naive', config: { intervals: 'conformal', conformal_windows: 1 } } }), 'model=naive');
    expect(few.json().errors[0].path).toBe('body.model_config.config.conformal_windows');
  });

  test('refit once: later dates keep the first date fit and take in their new observations; responses say so', async () => {
    const [serie] = hourlySeries(1, 120);
    const body = (refit?: unknown) => ({
      series: [{ ...serie, fcds: [72, 96, 120] }],
      horizon: 6,
      freq: 'H',
      quantiles: [0.1, 0.9],
      ...(refit !== undefined && { refit }),
    });
    const once = await post(body('once'), 'model=theta');
    expect(once.statusCode).toBe(200);
    const [first, second, third] = once.json().series[0];
    expect([first.refitted, second.refitted, third.refitted]).toEqual([true, false, false]);
    const task = (n: number) => ({ history: Float64Array.from(serie.target.slice(0, n)), horizon: 6, quantiles: [0.1, 0.9], seasonLength: 24 });
    const kept = fitTheta(task(72));
    expect(third.prediction.mean).toEqual([...forecastWithTheta(kept, task(120)).mean]);
    // Refitting every date (the default) says nothing, as the reference's responses.
    const every = (await post(body(), 'model=theta')).json().series[0];
    expect(every[0]).not.toHaveProperty('refitted');
    expect(every[0].prediction).toEqual(first.prediction);
    expect(every[2].prediction.mean).toEqual([...theta.forecast(task(120)).mean]);
    // A model that cannot keep a fit refits every date, and says so.
    const naive = (await post(body(2), 'model=naive')).json().series[0];
    expect(naive.map((p: { refitted: boolean }) => p.refitted)).toEqual([true, true, true]);
  });

  test('refit once with aarima: later dates keep the first selection, as Arima(y, model = fit)', async () => {
    const [serie] = hourlySeries(1, 120);
    const res = await post({ series: [{ ...serie, fcds: [72, 96, 120] }], horizon: 6, freq: 'H', quantiles: [0.1, 0.9], refit: 'once' }, 'model=aarima');
    expect(res.statusCode).toBe(200);
    const [first, , third] = res.json().series[0];
    expect([first.refitted, third.refitted]).toEqual([true, false]);
    const task = (n: number) => ({ history: Float64Array.from(serie.target.slice(0, n)), horizon: 6, quantiles: [0.1, 0.9], seasonLength: 24 });
    expect(third.prediction.mean).toEqual([...forecastWithAarima(fitAarima(task(72)), task(120)).mean]);
    expect(first.prediction.mean).toEqual([...aarima.forecast(task(72)).mean]);
  });

  test('refit once from a date too early for a likelihood fit or a season: later dates select afresh (aets, mstl, ces)', async () => {
    const [serie] = hourlySeries(1, 120);
    for (const model of ['aets', 'mstl', 'ces']) {
      const res = await post({ series: [{ ...serie, fcds: [6, 120] }], horizon: 6, freq: 'H', quantiles: [0.1, 0.9], refit: 'once' }, `model=${model}`);
      expect(res.statusCode, res.body).toBe(200);
      const [first, later] = res.json().series[0];
      expect([first.refitted, later.refitted]).toEqual([true, false]);
      const fresh = (await post({ series: [{ ...serie, fcds: [120] }], horizon: 6, freq: 'H', quantiles: [0.1, 0.9] }, `model=${model}`)).json().series[0][0];
      expect(later.prediction).toEqual(fresh.prediction);
    }
  });

  test('a bad refit policy names the field', async () => {
    for (const refit of [0, 'sometimes', 1.5]) {
      const res = await post(dailyRequest({ refit }), 'model=theta');
      expect(res.statusCode).toBe(422);
      expect(res.json().errors[0].path).toBe('body.refit');
    }
  });

  test('horizon up to 10000 is accepted (the current limit, not the older 1000)', async () => {
    const res = await post(dailyRequest({ horizon: 10000, quantiles: [] }));
    expect(res.statusCode).toBe(200);
    const p = res.json().series[0][0];
    expect(p.prediction.mean).toHaveLength(10000);
    expect(p.index[9999]).toBe('2051-05-28');
  });
});

/** dailyRequest's series with a future variable over its 10 days and 3 more, dated by `edit` of those 13 days. */
function futureDated(edit: (dates: string[]) => string[]) {
  const dates = Array.from({ length: 13 }, (_, i) => `2024-01-${String(i + 1).padStart(2, '0')}`);
  return { future_variables: { x: Array.from({ length: 13 }, (_, i) => i) }, future_variables_index: edit(dates) };
}

describe('validation: one errors entry per failing field, in the reference path form', () => {
  const cases: [string, unknown, string][] = [
    ['empty target', dailyRequest({}, { target: [], index: [] }), 'body.series[0].target'],
    ['non-numeric target value', dailyRequest({}, { target: [1, 'x', 3, 4, 5, 6, 7, 8, 9, 10] }), 'body.series[0].target[1]'],
    ['index length differs', dailyRequest({}, { index: ['2024-01-01'] }), 'body.series[0].index'],
    ['index not a date', dailyRequest({}, { index: ['2024-01-01', 'tomorrow', ...Array(8).fill('2024-01-03')] }), 'body.series[0].index[1]'],
    ['index entry not a string', dailyRequest({}, { index: ['2024-01-01', 20240102, ...Array(8).fill('2024-01-03')] }), 'body.series[0].index[1]'],
    [
      'index not increasing',
      dailyRequest({}, { index: ['2024-01-02', '2024-01-01', ...Array.from({ length: 8 }, (_, i) => `2024-02-0${i + 1}`)] }),
      'body.series[0].index[1]',
    ],
    [
      'index offset past 23:59',
      dailyRequest({}, { index: ['2024-01-01T00:00+24:00', ...Array.from({ length: 9 }, (_, i) => `2024-01-0${i + 2}`)] }),
      'body.series[0].index[0]',
    ],
    ['forecast past the year 9999', dailyRequest({ freq: 'Y', horizon: 7976 }), 'body.horizon'],
    ['future_variables_index without future variables', dailyRequest({}, { future_variables_index: ['2024-01-01'] }), 'body.series[0].future_variables_index'],
    [
      'future_variables_index off the index',
      dailyRequest(
        {},
        futureDated((dates) => dates.map((d, i) => (i === 4 ? '2024-01-06' : d))),
      ),
      'body.series[0].future_variables_index[4]',
    ],
    [
      'future_variables_index not increasing past it',
      dailyRequest(
        {},
        futureDated((dates) => dates.map((d, i) => (i === 12 ? '2024-01-11' : d))),
      ),
      'body.series[0].future_variables_index[12]',
    ],
    ['fcds past the end', dailyRequest({}, { fcds: [3, 11] }), 'body.series[0].fcds[1]'],
    ['fcds zero', dailyRequest({}, { fcds: [0] }), 'body.series[0].fcds[0]'],
    ['fcds empty', dailyRequest({}, { fcds: [] }), 'body.series[0].fcds'],
    ['horizon 0', dailyRequest({ horizon: 0 }), 'body.horizon'],
    ['horizon 10001', dailyRequest({ horizon: 10001 }), 'body.horizon'],
    ['horizon not an integer', dailyRequest({ horizon: 1.5 }), 'body.horizon'],
    ['context 0', dailyRequest({ context: 0 }), 'body.context'],
    ['quantile 0', dailyRequest({ quantiles: [0, 0.5] }), 'body.quantiles[0]'],
    ['quantile 1', dailyRequest({ quantiles: [0.5, 1] }), 'body.quantiles[1]'],
    ['duplicate quantiles', dailyRequest({ quantiles: [0.5, 0.5] }), 'body.quantiles'],
    ['unknown frequency', dailyRequest({ freq: '2H' }), 'body.freq'],
    ['missing horizon', { series: dailyRequest().series, freq: 'D' }, 'body.horizon'],
    ['unknown top-level property', dailyRequest({ quantile: [0.5] }), 'body.quantile'],
    ['unknown series property', dailyRequest({}, { targets: [1] }), 'body.series[0].targets'],
    [
      'model_config unknown property',
      dailyRequest({ model_config: { model: 'naive', config: { season_length: 2, seasonality: 7 } } }),
      'body.model_config.config.seasonality',
    ],
    [
      'model_config season_length 0',
      dailyRequest({ model_config: { model: 'naive', config: { season_length: 0 } } }),
      'body.model_config.config.season_length',
    ],
    ['model_config for another model', dailyRequest({ model_config: { model: 'aets', config: {} } }), 'body.model_config.model'],
    ['hist_variables length', dailyRequest({}, { hist_variables: { price: [1, 2] } }), 'body.series[0].hist_variables.price'],
    ['future_variables length', dailyRequest({}, { future_variables: { price: Array(10).fill(1) } }), 'body.series[0].future_variables.price'],
    ['holidays country code', dailyRequest({ covariates: [{ type: 'holidays', config: { country: 'USA' } }] }), 'body.covariates[0].config.country'],
    [
      'holidays window_size',
      dailyRequest({ covariates: [{ type: 'holidays', config: { country: 'US', window_size: 16 } }] }),
      'body.covariates[0].config.window_size',
    ],
    ['covariate type', dailyRequest({ covariates: [{ type: 'weather', config: {} }] }), 'body.covariates[0].type'],
    ['body not an object', [1, 2], 'body'],
  ];
  test.each(cases)('%s', async (_name, body, path) => {
    const res = await post(body);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem).toMatchObject({ status: 422, code: 'invalid_request', title: expect.any(String) });
    expect(problem.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(new Set(problem.errors.map((e: { path: string }) => e.path)).size).toBe(problem.errors.length);
  });

  test("future_variables_index that dates the values as the series does is taken, in any of the index's shapes", async () => {
    const same = await post(
      dailyRequest(
        {},
        futureDated((dates) => dates),
      ),
      'model=aarima',
    );
    expect(same.statusCode).toBe(200);
    const shapes = await post(
      dailyRequest(
        {},
        futureDated((dates) => dates.map((d, i) => (i % 2 ? `${d}T00:00:00Z` : `${d} 01:00+01:00`))),
      ),
      'model=aarima',
    );
    expect(shapes.statusCode).toBe(200);
    expect(shapes.json()).toEqual(same.json());
  });

  test('a forecast may reach 9999-12-31, not a day past it', async () => {
    const index = Array.from({ length: 10 }, (_, i) => `9999-12-${String(19 + i).padStart(2, '0')}`);
    const last = await post(dailyRequest({ horizon: 3 }, { index }));
    expect(last.statusCode).toBe(200);
    expect(last.json().series[0][0].index).toEqual(['9999-12-29', '9999-12-30', '9999-12-31']);
    const past = await post(dailyRequest({ horizon: 4 }, { index }));
    expect(past.statusCode).toBe(422);
    expect(past.json().errors).toEqual([
      { path: 'body.horizon', message: 'series[0] ends at 9999-12-28: 4 steps of D after it pass the year 9999, the last a date of the index can name' },
    ]);
    // Yearly steps from 2024: 7975 reach 9999, 7976 would not.
    expect((await post(dailyRequest({ freq: 'Y', horizon: 7975, quantiles: [] }))).statusCode).toBe(200);
  });

  test('several failing fields give several entries', async () => {
    const res = await post(dailyRequest({ horizon: 0, context: 0, freq: 'X' }));
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['body.context', 'body.freq', 'body.horizon']);
  });

  test('covariates sent to a model that cannot use them are refused, naming who can', async () => {
    const hist = await post(dailyRequest({}, { hist_variables: { price: Array(10).fill(1) } }));
    expect(hist.statusCode).toBe(422);
    expect(hist.json().errors[0]).toMatchObject({ path: 'body.series[0].hist_variables', message: expect.stringContaining('chronos-2') });
    const generated = await post(dailyRequest({ covariates: [{ type: 'holidays', config: { country: 'US' } }] }));
    expect(generated.json().errors[0].path).toBe('body.covariates');
    const statics = await post(dailyRequest({}, { static_variables: { size: 3 } }));
    expect(statics.json().errors[0].path).toBe('body.series[0].static_variables');
  });

  test("values the models' arithmetic cannot hold, and regressors that explain the series exactly, are 422s naming the series", async () => {
    const huge = await post(dailyRequest({ quantiles: [0.1] }, { target: [1e160, -1e160, 1e160, -1e160, 1e160, -1e160, 1e160, 1e160, -1e160, 1e160] }));
    expect(huge.statusCode).toBe(422);
    expect(huge.json().errors).toEqual([{ path: 'body.series[0]', message: expect.stringMatching(/naive could not fit values as large as 1\.00e\+160/) }]);
    // aets (and mstl, whose trend it forecasts) answered intervals of width zero here: its variance overflowed.
    const noisy = Array.from({ length: 40 }, (_, t) => 1e200 * (1 + 0.01 * Math.sin(t * 1.7)));
    for (const model of ['aets', 'mstl']) {
      const res = await post(
        dailyRequest({ quantiles: [0.1, 0.9] }, { target: noisy, index: noisy.map((_, t) => new Date(Date.UTC(2024, 0, 1 + t)).toISOString().slice(0, 10)) }),
        `model=${model}`,
      );
      expect(res.statusCode, model).toBe(422);
      expect(res.json().errors, model).toEqual([{ path: 'body.series[0]', message: expect.stringMatching(/could not fit values as large as 1\.01e\+200/) }]);
    }
    const target = Array.from({ length: 10 }, (_, i) => i + 1);
    const exact = await post(dailyRequest({ horizon: 2 }, { target, future_variables: { x: [...target, 11, 12] } }), 'model=aarima');
    expect(exact.statusCode).toBe(422);
    expect(exact.json().errors).toEqual([
      { path: 'body.series[0]', message: expect.stringMatching(/aarima could not fit its regressors \(x\): they explain the series exactly/) },
    ]);
  });

  test('a history too short for the model is a 422 naming the series', async () => {
    const res = await post(dailyRequest({ model_config: { model: 'naive', config: { season_length: 24 } } }));
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.series[0]');
  });
});

describe('query parameters', () => {
  test('unknown model', async () => {
    const res = await post(dailyRequest(), 'model=prophet');
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('query.model');
  });
  test('a known model this server cannot run names itself and what can run', async () => {
    const res = await post(dailyRequest(), 'model=chronos-2');
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ code: 'model_unavailable', detail: expect.stringMatching(/chronos-2.*naive/) });
  });
  test('cloud and region are validated', async () => {
    expect((await post(dailyRequest(), 'model=naive&cloud=azure')).json().errors[0].path).toBe('query.cloud');
    expect((await post(dailyRequest(), 'model=naive&region=asia')).json().errors[0].path).toBe('query.region');
    expect((await post(dailyRequest(), 'model=naive&cloud=oci&region=eu')).statusCode).toBe(200);
  });
  test('without model the default model answers (aets)', async () => {
    const res = await post(dailyRequest({ quantiles: [0.5] }), '');
    expect(res.statusCode).toBe(200);
    const explicit = await post(dailyRequest({ quantiles: [0.5] }), 'model=aets');
    expect(res.json().series).toEqual(explicit.json().series);
  });
});

describe('every non-2xx answer is problem+json', () => {
  test.each([
    ['missing key', {}, 401, 'invalid_auth'],
    ['wrong key', { authorization: 'Bearer nope' }, 401, 'invalid_auth'],
    ['not a bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, 401, 'invalid_auth'],
  ])('%s', async (_n, headers, status, code) => {
    const res = await post(dailyRequest(), 'model=naive', headers as Record<string, string>);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status, code, title: 'Unauthorized', type: 'about:blank' });
  });

  test('body that is not JSON', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/forecast?model=naive',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: '{"series": [',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('invalid_json');
    expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/);
  });

  test('a known path asked with a method it does not take: 405 with an Allow header; an unknown path: 404', async () => {
    const get = await server.app.inject({ method: 'GET', url: '/forecast?model=naive', headers: AUTH });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect(get.headers['content-type']).toMatch(/problem\+json/);
    expect(get.json()).toMatchObject({ status: 405, code: 'method_not_allowed', title: 'Method Not Allowed' });
    const del = await server.app.inject({ method: 'DELETE', url: '/openapi' });
    expect(del.statusCode).toBe(405);
    expect(del.headers.allow).toBe('GET, HEAD');
    const unknown = await server.app.inject({ method: 'GET', url: '/nowhere', headers: AUTH });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.allow).toBeUndefined();
  });

  test('a trailing slash is another path: 404, not a 405 that allows the method used', async () => {
    for (const [method, url] of [
      ['POST', '/forecast/?model=naive'],
      ['GET', '/openapi/'],
      ['GET', '/warmup/?model=naive'],
    ] as const) {
      const res = await server.app.inject({ method, url, headers: AUTH, ...(method === 'POST' && { payload: dailyRequest() }) });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
  });

  test("the router's own refusals: a bad percent-escape, a name past the router's length", async () => {
    const bad = await server.app.inject({ method: 'GET', url: '/forecast-jobs/%zz', headers: AUTH });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(bad.json()).toMatchObject({ status: 400, code: 'bad_request', title: 'Bad Request' });
    for (const url of [`/models/${'a'.repeat(5000)}`, `/nowhere/${'a'.repeat(5000)}`]) {
      const long = await server.app.inject({ method: 'GET', url, headers: AUTH });
      expect(long.statusCode).toBe(404);
      expect(long.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(long.json()).toMatchObject({ code: 'not_found' });
      expect(long.body.length).toBeLessThan(400);
    }
  });

  test("what Node's HTTP parser refuses (oversized headers, malformed HTTP) is problem+json too", async () => {
    await server.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = server.app.server.address() as AddressInfo;
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        let answer = '';
        const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
        socket.on('data', (chunk) => (answer += chunk));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    const answers = [
      [await raw(`GET /openapi HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, 'headers_too_large'],
      [await raw('HELLO THERE\r\n\r\n'), 400, 'bad_request'],
    ] as const;
    for (const [answer, status, code] of answers) {
      const [head, body] = answer.split('\r\n\r\n');
      expect(head).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
      expect(head).toMatch(/content-type: application\/problem\+json/i);
      expect(JSON.parse(body)).toMatchObject({ status, code, type: 'about:blank' });
    }
  });

  test('wrong content type', async () => {
    const res = await server.app.inject({ method: 'POST', url: '/forecast?model=naive', headers: { ...AUTH, 'content-type': 'text/plain' }, payload: 'hello' });
    expect(res.statusCode).toBe(415);
    expect(res.json().code).toBe('unsupported_media_type');
  });

  test('unknown route', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/nothing-here', headers: AUTH });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json().code).toBe('not_found');
  });
});

test('GET /warmup loads the model and says how long it took', async () => {
  const res = await server.app.inject({ method: 'GET', url: '/warmup?model=naive&cloud=gcp&region=us', headers: AUTH });
  expect(res.statusCode).toBe(200);
  expect(res.json()).toMatchObject({ model: 'naive', status: 'ready', load_time_ms: expect.any(Number), cloud: 'gcp', region: 'us' });
  const unavailable = await server.app.inject({ method: 'GET', url: '/warmup?model=timesfm-2', headers: AUTH });
  expect(unavailable.json().code).toBe('model_unavailable');
  expect((await server.app.inject({ method: 'GET', url: '/warmup?model=naive' })).statusCode).toBe(401);
});
