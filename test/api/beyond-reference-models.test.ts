import { describe, expect, test } from 'vitest';
import { ces, fitCes, forecastWithCes } from '../../models/families/ces/ces.ts';
import { aets } from '../../models/families/ets/aets.ts';
import { fitMstl, forecastWithMstl, mstl } from '../../models/families/mstl/mstl.ts';
import { AUTH, dailyRequest, hourlySeries, useTestServer } from './helpers.ts';

const server = useTestServer();

const post = (body: unknown, query = 'model=ensemble') =>
  server.app.inject({ method: 'POST', url: `/forecast?${query}`, headers: AUTH, payload: body as object });

const hourly = (extra: Record<string, unknown> = {}) => ({
  series: hourlySeries(3, 240).map((s) => ({ ...s, fcds: [216, 240] })),
  horizon: 12,
  freq: 'H',
  quantiles: [0.1, 0.5, 0.9],
  ...extra,
});

describe('POST /forecast?model=ensemble', () => {
  test('default members for long series (aets, theta, mstl, svc-global, seasonal-naive): backtest forecasts with ordered conformal quantiles and metrics', async () => {
    const res = await post(hourly());
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.series).toHaveLength(3);
    for (const [atFcd, latest] of body.series) {
      expect(atFcd.metrics.mae).toBeGreaterThan(0);
      // Hourly data with a daily cycle: the combination follows it, within a few units.
      expect(atFcd.metrics.mae).toBeLessThan(8);
      expect(latest.metrics).toBeNull();
      latest.prediction.mean.forEach((m: number, j: number) => {
        expect(latest.prediction['0.1'][j]).toBeLessThanOrEqual(m);
        expect(latest.prediction['0.9'][j]).toBeGreaterThanOrEqual(m);
        expect(latest.prediction['0.9'][j]).toBeGreaterThan(latest.prediction['0.1'][j]);
      });
    }
  });

  test("a short monthly series gets the short-series profile by default: the equal mean of aets, aarima, theta, ces, mstl and svc-global, with the members' quantiles", async () => {
    // Five years of monthly data with a yearly cycle and a trend (60 observations: short).
    const index = Array.from({ length: 60 }, (_, t) => `${2019 + Math.floor(t / 12)}-${String((t % 12) + 1).padStart(2, '0')}-01`);
    const target = index.map((_, t) => 200 + 1.5 * t + 25 * Math.sin((2 * Math.PI * t) / 12) + ((t * 7919) % 11));
    const body = (config?: Record<string, unknown>) => ({
      series: [{ target, index }],
      horizon: 12,
      freq: 'M',
      quantiles: [0.1, 0.9],
      ...(config && { model_config: { model: 'ensemble', config } }),
    });
    const byDefault = await post(body());
    expect(byDefault.statusCode, byDefault.body).toBe(200);
    const named = await post(body({ members: ['aets', 'aarima', 'theta', 'ces', 'mstl', 'svc-global'], combination: 'mean' }));
    const longProfile = await post(body({ members: ['aets', 'theta', 'mstl', 'svc-global', 'seasonal-naive'], combination: 'weighted' }));
    const prediction = (res: typeof byDefault) => res.json().series[0][0].prediction;
    expect(prediction(byDefault)).toEqual(prediction(named));
    expect(prediction(byDefault).mean).not.toEqual(prediction(longProfile).mean);
    // Its quantiles are the members' own around the mean; conformal ones on request, same mean.
    const members = await post(body({ intervals: 'members' }));
    const conformal = await post(body({ intervals: 'conformal' }));
    expect(prediction(members)).toEqual(prediction(byDefault));
    expect(prediction(conformal).mean).toEqual(prediction(byDefault).mean);
    expect(prediction(conformal)['0.9']).not.toEqual(prediction(byDefault)['0.9']);
  }, 60_000);

  test("many short series of different periods: the default pools their last-window errors and weighs members by them; of one period, the members' quantiles, still weighed by the pool", async () => {
    // 32 yearly series of 20 years with different trends and noise; `shift` moves each one's end.
    const yearly = (shift: (i: number) => number, config?: Record<string, unknown>) => ({
      series: Array.from({ length: 32 }, (_, i) => {
        const end = 2020 - shift(i);
        return {
          index: Array.from({ length: 20 }, (_, t) => `${end - 19 + t}-01-01`),
          target: Array.from({ length: 20 }, (_, t) => 100 + (1 + (i % 5)) * t + ((t * 7919 + i * 104729) % 13)),
        };
      }),
      horizon: 4,
      freq: 'Y',
      quantiles: [0.1, 0.9],
      ...(config && { model_config: { model: 'ensemble', config } }),
    });
    const answers = async (body: unknown) => {
      const res = await post(body);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().series.map((s: { prediction: Record<string, number[]> }[]) => s[0].prediction);
    };
    const spread = (i: number) => i % 8;
    const pooled = await answers(yearly(spread));
    const members = await answers(yearly(spread, { intervals: 'members' }));
    expect(pooled.map((p: Record<string, number[]>) => p.mean)).toEqual(members.map((p: Record<string, number[]>) => p.mean));
    expect(pooled[0]['0.9']).not.toEqual(members[0]['0.9']);
    expect(pooled).toEqual(await answers(yearly(spread, { intervals: 'pooled' })));
    const onePeriod = await answers(yearly(() => 0));
    expect(onePeriod).toEqual(await answers(yearly(() => 0, { intervals: 'members' })));
    // The same pool weighs the members; of one period too (every member met the same shock).
    const means = (answers: Record<string, number[]>[]) => answers.map((p) => p.mean);
    expect(means(pooled)).toEqual(means(await answers(yearly(spread, { combination: 'pooled' }))));
    expect(means(pooled)).not.toEqual(means(await answers(yearly(spread, { combination: 'mean' }))));
    expect(means(onePeriod)).toEqual(means(await answers(yearly(() => 0, { combination: 'pooled' }))));
    expect(means(onePeriod)).not.toEqual(means(await answers(yearly(() => 0, { combination: 'mean' }))));
  }, 60_000);

  test('a backtest pools only what each creation date knew: no look-ahead across dates', async () => {
    // 16 yearly series of 24 years, each forecast at two creation dates: 32 tasks, two periods.
    const body = (fcds: number[]) => ({
      series: Array.from({ length: 16 }, (_, i) => ({
        index: Array.from({ length: 24 }, (_, t) => `${1997 + t}-01-01`),
        target: Array.from({ length: 24 }, (_, t) => 100 + (1 + (i % 5)) * t + ((t * 7919 + i * 104729) % 13)),
        fcds,
      })),
      horizon: 4,
      freq: 'Y',
      quantiles: [0.1, 0.9],
    });
    const answers = async (fcds: number[]) => {
      const res = await post(body(fcds));
      expect(res.statusCode, res.body).toBe(200);
      return res.json().series.map((s: { prediction: Record<string, number[]> }[]) => s.map((p) => p.prediction));
    };
    const both = await answers([16, 20]);
    const first = await answers([16]);
    const second = await answers([20]);
    // At the first date the 16 windows known are one period's: what the first date alone gets.
    both.forEach((byDate: Record<string, number[]>[], i: number) => expect(byDate[0]).toEqual(first[i][0]));
    // At the second date 32 windows of two periods are known: they pool.
    expect(both[0][1]).not.toEqual(second[0][0]);
  }, 60_000);

  test('model_config chooses members, combination and windows; the answers differ accordingly', async () => {
    const config = (c: Record<string, unknown>) =>
      hourly({ model_config: { model: 'ensemble', config: { members: ['naive', 'seasonal-naive', 'theta'], ...c } } });
    const weighted = (await post(config({}))).json().series[0][1].prediction;
    const mean = (await post(config({ combination: 'mean' }))).json().series[0][1].prediction;
    const median = (await post(config({ combination: 'median', conformal_windows: 3 }))).json().series[0][1].prediction;
    expect(weighted.mean).not.toEqual(mean.mean);
    expect(median.mean).not.toEqual(mean.mean);
    expect(median['0.9']).not.toEqual(mean['0.9']);
  });

  test('bad settings are a 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ members: ['aets', 'chronos-2'] }, 'body.model_config.config.members[1]'],
      [{ members: ['aets'] }, 'body.model_config.config.members'],
      [{ members: ['aets', 'aets'] }, 'body.model_config.config.members'],
      [{ combination: 'vote' }, 'body.model_config.config.combination'],
      [{ intervals: 'bootstrap' }, 'body.model_config.config.intervals'],
      [{ conformal_windows: 1 }, 'body.model_config.config.conformal_windows'],
    ];
    for (const [config, path] of cases) {
      const res = await post(dailyRequest({ model_config: { model: 'ensemble', config } }));
      expect(res.statusCode, JSON.stringify(config)).toBe(422);
      expect(res.json().errors[0].path).toBe(path);
    }
  });

  test("a series no member can forecast is a 422 naming it and every member's reason", async () => {
    const res = await post(
      dailyRequest(
        { model_config: { model: 'ensemble', config: { members: ['seasonal-naive', 'theta'] } } },
        { target: [1, 2, 3], index: ['2024-01-01', '2024-01-02', '2024-01-03'] },
      ),
    );
    expect(res.statusCode).toBe(422);
    expect(JSON.stringify(res.json())).toMatch(/seasonal-naive: .*theta: /);
  });
});

describe('POST /forecast?model=mstl', () => {
  // Three weeks of hourly data with a daily and a weekly cycle.
  const index = Array.from({ length: 504 }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 3_600_000).toISOString().slice(0, 19));
  const target = index.map((_, t) => 100 + 10 * Math.sin((2 * Math.PI * t) / 24) + 8 * Math.cos((2 * Math.PI * t) / 168) + ((t * 7919) % 5));
  const body = (extra: Record<string, unknown> = {}) => ({ series: [{ target, index }], horizon: 24, freq: 'H', quantiles: [0.1, 0.9], ...extra });

  test('hourly data gets the day and the week by default; model_config takes a list or one period, and aarima for the rest', async () => {
    const both = await post(body(), 'model=mstl');
    expect(both.statusCode).toBe(200);
    const listed = await post(body({ model_config: { model: 'mstl', config: { season_length: [168, 24] } } }), 'model=mstl');
    expect(listed.json().series[0][0].prediction.mean).toEqual(both.json().series[0][0].prediction.mean);
    const daily = await post(body({ model_config: { model: 'mstl', config: { season_length: 24 } } }), 'model=mstl');
    expect(daily.json().series[0][0].prediction.mean).not.toEqual(both.json().series[0][0].prediction.mean);
    const arima = await post(body({ model_config: { model: 'mstl', config: { trend_model: 'aarima' } } }), 'model=mstl');
    expect(arima.statusCode).toBe(200);
    expect(arima.json().series[0][0].prediction.mean).not.toEqual(both.json().series[0][0].prediction.mean);
    const p = both.json().series[0][0].prediction;
    // The weekly cycle is followed: the forecast rises and falls by about the simulated amplitude.
    expect(Math.max(...p.mean) - Math.min(...p.mean)).toBeGreaterThan(15);
    p.mean.forEach((m: number, j: number) => expect(p['0.1'][j]).toBeLessThan(m));
  });

  test('a backtest with a refit policy keeps the first fit: its cycles and trend fit take in the later observations', async () => {
    const fcds = [432, 456, 480];
    const res = await post(body({ series: [{ target, index, fcds }], refit: 'once' }), 'model=mstl');
    expect(res.statusCode).toBe(200);
    const [first, , latest] = res.json().series[0];
    expect([first.refitted, latest.refitted]).toEqual([true, false]);
    const history = Float64Array.from(target.slice(0, 480));
    const at = (n: number) => ({ history: history.subarray(0, n), horizon: 24, quantiles: [0.1, 0.9], seasonLength: 24, seasonLengths: [24, 168] });
    const kept = forecastWithMstl(fitMstl(at(432)), { ...at(480), refit: { fcd: 432, history: history.subarray(0, 432), since: 48 } });
    expect(latest.prediction.mean).toEqual([...kept.mean]);
    expect(latest.prediction.mean).not.toEqual([...mstl.forecast(at(480)).mean]);
  });

  test('bad settings name the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ season_length: [24, 0] }, 'body.model_config.config.season_length'],
      [{ season_length: [] }, 'body.model_config.config.season_length'],
      [{ trend_model: 'theta' }, 'body.model_config.config.trend_model'],
    ];
    for (const [config, path] of cases) {
      const res = await post(body({ model_config: { model: 'mstl', config } }), 'model=mstl');
      expect(res.statusCode, JSON.stringify(config)).toBe(422);
      expect(res.json().errors[0].path).toMatch(new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}`));
    }
  });
});

describe('POST /forecast?model=ces', () => {
  test('the model core forecast, a backtest with a refit policy, a too-short history named', async () => {
    const [serie] = hourlySeries(1, 144);
    const res = await post({ series: [{ ...serie, fcds: [96, 120, 144] }], horizon: 12, freq: 'H', quantiles: [0.1, 0.9], refit: 'once' }, 'model=ces');
    expect(res.statusCode).toBe(200);
    const [first, , latest] = res.json().series[0];
    expect(first.refitted).toBe(true);
    expect(latest.refitted).toBe(false);
    const history = Float64Array.from(serie.target.slice(0, 144));
    const kept = forecastWithCes(fitCes({ history: history.subarray(0, 96), horizon: 12, quantiles: [], seasonLength: 24 }), {
      history,
      horizon: 12,
      quantiles: [0.1, 0.9],
      seasonLength: 24,
      refit: { fcd: 96, history: history.subarray(0, 96), since: 48 },
    });
    expect(latest.prediction.mean).toEqual([...kept.mean]);
    const fresh = (await post({ series: [serie], horizon: 12, freq: 'H', quantiles: [0.1, 0.9] }, 'model=ces')).json().series[0][0];
    expect(fresh.prediction['0.9']).toEqual([...ces.forecast({ history, horizon: 12, quantiles: [0.1, 0.9], seasonLength: 24 }).quantiles[1]]);
    const short = await post(dailyRequest({}, { target: [1, 2, 3, 4], index: ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'] }), 'model=ces');
    expect(short.statusCode).toBe(422);
    expect(short.json().errors[0].path).toBe('body.series[0]');
  });
});

describe('POST /forecast?model=aets: estimation', () => {
  const weekly = () => {
    // Two and a half years of a weekly series with a yearly cycle: R's ets() drops a 52-week season.
    const target = Array.from({ length: 130 }, (_, t) => 100 + 20 * Math.sin((2 * Math.PI * t) / 52) + ((t * 7919) % 13) / 4);
    const start = Date.UTC(2022, 0, 3);
    const index = target.map((_, t) => new Date(start + t * 7 * 86_400_000).toISOString().slice(0, 10));
    return { series: [{ target, index }], horizon: 8, freq: 'W', quantiles: [0.1, 0.9] };
  };
  const withEstimation = (estimation?: string) => ({
    ...weekly(),
    ...(estimation && { model_config: { model: 'aets', config: { estimation } } }),
  });

  test("statsforecast by default; r gives R's ets() (no 52-week season), with the same answer as the model core", async () => {
    const byDefault = await post(withEstimation(), 'model=aets');
    const explicit = await post(withEstimation('statsforecast'), 'model=aets');
    const asR = await post(withEstimation('r'), 'model=aets');
    for (const res of [byDefault, explicit, asR]) expect(res.statusCode).toBe(200);
    const mean = (res: typeof byDefault) => res.json().series[0][0].prediction.mean as number[];
    expect(mean(byDefault)).toEqual(mean(explicit));
    const { target } = weekly().series[0];
    const task = { history: Float64Array.from(target), horizon: 8, quantiles: [0.1, 0.9], seasonLength: 52 };
    expect(mean(asR)).toEqual([...aets.forecast({ ...task, options: { estimation: 'r' } }).mean]);
    expect(mean(byDefault)).toEqual([...aets.forecast(task).mean]);
    // The seasonal fit follows the cycle down; R's non-seasonal one cannot.
    expect(Math.max(...mean(byDefault)) - Math.min(...mean(byDefault))).toBeGreaterThan(Math.max(...mean(asR)) - Math.min(...mean(asR)));
  });

  test('an unknown estimation is a 422 naming the field', async () => {
    const res = await post(withEstimation('python'), 'model=aets');
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.model_config.config.estimation');
  });
});

describe('POST /forecast?model=seasonal-window-average', () => {
  // An hourly pattern with a little deterministic noise, so that the average errs inside the history.
  const series = hourlySeries(1, 24 * 7 * 3).map((s) => ({ ...s, target: (s.target as number[]).map((v, t) => v + ((t * 7919) % 13) / 10) }));
  const body = (config?: Record<string, unknown>) => ({
    series,
    horizon: 24,
    freq: 'H',
    quantiles: [0.1, 0.9],
    ...(config && { model_config: { model: 'seasonal-window-average', config } }),
  });
  const answer = async (config?: Record<string, unknown>) => {
    const res = await post(body(config), 'model=seasonal-window-average');
    expect(res.statusCode, res.body).toBe(200);
    return res.json().series[0][0].prediction as Record<string, number[]>;
  };

  test("hourly data: the week's same hour over the last weeks (window_size), with ordered quantiles", async () => {
    const target = body().series[0].target as number[];
    const n = target.length;
    const week = 24 * 7;
    const sameHour = (weeks: number, j: number) => Array.from({ length: weeks }, (_, c) => target[n - (c + 1) * week + j]).reduce((a, b) => a + b) / weeks;
    // Three weeks held, four asked by default: all three; window_size 2: the last two.
    const byDefault = await answer();
    const two = await answer({ window_size: 2 });
    byDefault.mean.forEach((m, j) => expect(m).toBeCloseTo(sameHour(3, j), 9));
    two.mean.forEach((m, j) => expect(m).toBeCloseTo(sameHour(2, j), 9));
    byDefault.mean.forEach((m, j) => {
      expect(byDefault['0.1'][j]).toBeLessThan(m);
      expect(byDefault['0.9'][j]).toBeGreaterThan(m);
    });
    // A season of one day only: the day's same hour.
    const daily = await answer({ season_length: 24, window_size: 1 });
    daily.mean.forEach((m, j) => expect(m).toBeCloseTo(target[n - 24 + j], 9));
  });

  test('a window_size below 1 is a 422 naming the field', async () => {
    const res = await post(body({ window_size: 0 }), 'model=seasonal-window-average');
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.model_config.config.window_size');
  });
});
