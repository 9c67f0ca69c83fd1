import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HttpError, httpFieldErrors } from '../../api/problem.ts';
import { parseOr422 } from '../../api/validation.ts';
import { resolveCovariates } from '../../engine/covariates/generator.ts';
import { planForecasts } from '../../engine/plan.ts';
import type { EngineError } from '../../engine/errors.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { wallClockMillis } from '../../engine/time-index.ts';
import { modelEntry } from '../../models/contract/model-registry.ts';
import { testTempDir } from '../temp-root.ts';

const days = (from: string, count: number) =>
  Array.from({ length: count }, (_, i) => new Date(Date.parse(`${from}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10));
const hours = (from: string, count: number) =>
  Array.from({ length: count }, (_, i) => new Date(Date.parse(`${from}Z`) + i * 3_600_000).toISOString().slice(0, 19));

function request(covariates: unknown[], index: string[], freq = 'D', horizon = 3, extra: Record<string, unknown> = {}) {
  return ForecastRequest.parse({ series: [{ target: index.map((_, i) => i + 1), index, ...extra }], horizon, freq, covariates });
}

/** How the API refuses covariates its request schema does not take (an enum of countries or currencies, say). */
function schemaErrors(covariates: unknown[]) {
  const index = days('2024-01-01', 3);
  try {
    parseOr422(ForecastRequest, { series: [{ target: [1, 2, 3], index }], horizon: 1, freq: 'D', covariates }, 'body');
  } catch (error) {
    if (error instanceof HttpError) return error.errors ?? [];
    throw error;
  }
  throw new Error('the request schema took the covariates');
}

/** FLOAT_SOURCES_DIR as the engine is configured with it (the float tests register sources). */
let floatSourcesDir = path.join(os.tmpdir(), 'no-float-sources');

/** The request's generated covariates' errors, at the paths the API answers with. */
const checkGeneratedCovariates = (req: ForecastRequest) => httpFieldErrors(resolveCovariates(req, floatSourcesDir).errors);

function covariateGenerator(req: ForecastRequest) {
  const { generator, errors } = resolveCovariates(req, floatSourcesDir);
  if (errors.length > 0) throw new Error(JSON.stringify(checkGeneratedCovariates(req)));
  return generator!;
}

/** The generated columns of the first series over its index and the horizon. */
function columns(req: ForecastRequest) {
  const s = req.series[0];
  const n = s.index.length;
  const times = Float64Array.from(s.index, wallClockMillis);
  const step = n > 1 ? times[n - 1] - times[n - 2] : 86_400_000;
  const all = Float64Array.from({ length: n + req.horizon }, (_, i) => (i < n ? times[i] : times[n - 1] + (i - n + 1) * step));
  return covariateGenerator(req).build(all);
}

describe('holidays', () => {
  const july = days('2024-07-01', 10);
  test('none marks the holiday days with 1, every other day 0', () => {
    const { future } = columns(request([{ type: 'holidays', config: { country: 'US', smoothing_method: 'none' } }], july));
    expect(Array.from(future['holidays:US'])).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });
  test('auto keeps the sharp 0/1 day on a daily series', () => {
    const { future } = columns(request([{ type: 'holidays', config: { country: 'us' } }], july));
    expect(future['holidays:US'][3]).toBe(1);
    expect(future['holidays:US'][2]).toBe(0);
  });
  test('gaussian spreads over the window with the given sigma', () => {
    const { future } = columns(request([{ type: 'holidays', config: { country: 'US', smoothing_method: 'gaussian', window_size: 5, sigma: 1 } }], july));
    const col = Array.from(future['holidays:US:gaussian:w5:s1']);
    expect(col[3]).toBe(1);
    expect(col[2]).toBeCloseTo(Math.exp(-0.5), 12);
    expect(col[1]).toBeCloseTo(Math.exp(-2), 12);
    expect(col[0]).toBe(0); // outside the window of 5
    expect(col[5]).toBeCloseTo(Math.exp(-2), 12);
  });
  test('exponential, ramp and flat', () => {
    const req = request(
      [
        { type: 'holidays', config: { country: 'US', smoothing_method: 'exponential', window_size: 3, sigma: 2 } },
        { type: 'holidays', config: { country: 'US', smoothing_method: 'ramp', ramp_days: 3 } },
        { type: 'holidays', config: { country: 'US', smoothing_method: 'flat', window_size: 3 } },
      ],
      july,
    );
    const { future } = columns(req);
    expect(Array.from(future['holidays:US:exponential:w3:s2']).slice(1, 6)).toEqual([0, Math.exp(-0.5), 1, Math.exp(-0.5), 0]);
    const ramp = Array.from(future['holidays:US:ramp:3']).slice(0, 6);
    [0, 1 / 3, 2 / 3, 1, 0, 0].forEach((v, i) => expect(ramp[i]).toBeCloseTo(v, 12));
    expect(Array.from(future['holidays:US:flat:w3']).slice(1, 6)).toEqual([0, 1, 1, 1, 0]);
  });
  test('an hourly series marks the holiday hours: the German Christmas Eve from 14:00, Christmas all day', () => {
    const { future } = columns(request([{ type: 'holidays', config: { country: 'DE', smoothing_method: 'none' } }], hours('2024-12-24T00:00:00', 48), 'H'));
    const col = Array.from(future['holidays:DE']);
    expect(col.slice(0, 14).every((v) => v === 0)).toBe(true);
    expect(col.slice(14, 24).every((v) => v === 1)).toBe(true);
    expect(col.slice(24, 48).every((v) => v === 1)).toBe(true);
  });
  test('weekly and monthly steps count the holiday days of their week or month', () => {
    const weekly = columns(request([{ type: 'holidays', config: { country: 'US' } }], ['2024-12-22', '2024-12-29', '2025-01-05'], 'W', 1));
    // Weeks ending Dec 29 (Christmas) and Jan 5 (New Year).
    expect(Array.from(weekly.future['holidays:US'])).toEqual([0, 1, 1, 0]);
    const monthly = columns(request([{ type: 'holidays', config: { country: 'US' } }], ['2024-06-30', '2024-07-31'], 'M', 1));
    expect(Array.from(monthly.future['holidays:US'])).toEqual([1, 1, 0]); // Juneteenth, Independence Day, none in August
  });
  test('an unknown country is a 422 listing the known ones (the request schema has them as an enum)', () => {
    const errors = schemaErrors([{ type: 'holidays', config: { country: 'XX' } }]);
    expect(errors).toEqual([{ path: 'body.covariates[0].config.country', message: expect.stringContaining('DE, DJ, DK') }]);
  });
});

describe('events', () => {
  test('one column per event of the country; Black Friday and Cyber Monday on their days', () => {
    const { future } = columns(request([{ type: 'events', config: { country: 'US' } }], days('2024-11-27', 7)));
    expect(Array.from(future['events:US:black_friday'])).toEqual([0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    expect(Array.from(future['events:US:cyber_monday'])).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect(Object.keys(future).length).toBeGreaterThan(10);
  });
  test('years a listed-dates event is not known for are missing, not 0', () => {
    const { future } = columns(request([{ type: 'events', config: { country: 'US' } }], days('2027-02-10', 3)));
    expect(Array.from(future['events:US:super_bowl']).every(Number.isNaN)).toBe(true);
    expect(future['events:US:valentines_day'][4]).toBe(1);
  });
  test('Global exists; an unknown country lists the calendar countries', () => {
    expect(checkGeneratedCovariates(request([{ type: 'events', config: { country: 'Global' } }], days('2024-01-01', 3)))).toEqual([]);
    expect(columns(request([{ type: 'events', config: { country: 'global' } }], days('2024-01-01', 3))).future['events:Global:valentines_day']).toBeDefined();
    const [error] = schemaErrors([{ type: 'events', config: { country: 'ZZ' } }]);
    expect(error.path).toBe('body.covariates[0].config.country');
    expect(error.message).toContain('Global');
  });
});

describe('forex', () => {
  test('days without a rate take the last published one; cross rates go through the euro', () => {
    // 2023-12-29 (Friday) EUR/USD 1.105, EUR/JPY 156.33; 2024-01-01 is a TARGET holiday.
    const req = request(
      [
        { type: 'forex', config: { target: 'USD' } },
        { type: 'forex', config: { base: 'USD', target: 'JPY' } },
      ],
      ['2023-12-29', '2023-12-30', '2023-12-31', '2024-01-01'],
      'D',
      1,
    );
    const { hist, future } = columns(req);
    expect(Object.keys(future)).toEqual([]);
    expect(Array.from(hist['forex:EUR/USD']).slice(0, 4)).toEqual([1.105, 1.105, 1.105, 1.105]);
    expect(hist['forex:USD/JPY'][0]).toBeCloseTo(156.33 / 1.105, 10);
  });
  test('after the data ends, the last rate is carried', () => {
    const { hist } = columns(request([{ type: 'forex', config: { target: 'USD' } }], ['2026-04-13', '2026-06-01'], 'D', 1));
    expect(hist['forex:EUR/USD'][1]).toBe(1.1684);
  });
  test('an hourly step takes its day rate from 16:00 on', () => {
    const { hist } = columns(request([{ type: 'forex', config: { target: 'USD' } }], hours('2024-01-03T15:00:00', 2), 'H', 1));
    expect(hist['forex:EUR/USD'][0]).toBe(1.0956); // 2024-01-02
    expect(hist['forex:EUR/USD'][1]).toBe(1.0919); // 2024-01-03
  });
  test('an unknown currency, and a series before the first rate, are 422s', () => {
    expect(schemaErrors([{ type: 'forex', config: { target: 'XYZ' } }])[0].path).toBe('body.covariates[0].config.target');
    const [early] = checkGeneratedCovariates(request([{ type: 'forex', config: { target: 'BRL' } }], days('2007-12-30', 3)));
    expect(early).toEqual({ path: 'body.covariates[0].config', message: expect.stringContaining('start on 2008-01-02') });
  });
});

describe('float data sources', () => {
  let dir: string;
  const saved = floatSourcesDir;
  beforeAll(() => {
    dir = testTempDir('float-sources-');
    fs.writeFileSync(path.join(dir, 'weather.csv'), 'date,temp,station\n2024-01-01,1.5,a\n2024-01-02,2.5,a\n2024-01-04,4,a\n2024-01-08,8,a\n');
    floatSourcesDir = dir;
  });
  afterAll(() => {
    floatSourcesDir = saved;
  });
  test('a column aligned to a daily index: the day value, else the latest before; missing before the first row', () => {
    const { future } = columns(request([{ type: 'float', config: { data_source: 'weather', column: 'temp' } }], days('2023-12-31', 6), 'D', 2));
    expect(Array.from(future['float:weather:temp'])).toEqual([NaN, 1.5, 2.5, 2.5, 4, 4, 4, 4]);
  });
  test('weekly steps take the mean of their days', () => {
    const { future } = columns(request([{ type: 'float', config: { data_source: 'weather', column: 'temp' } }], ['2024-01-07', '2024-01-14'], 'W', 1));
    expect(future['float:weather:temp'][0]).toBeCloseTo((1.5 + 2.5 + 4) / 3, 12);
    // The week to Jan 14 holds the Jan 8 row; the week to Jan 21 none: the latest before.
    expect(Array.from(future['float:weather:temp']).slice(1)).toEqual([8, 8]);
  });
  test('an unknown source or column is a 422 that lists what exists', () => {
    const [source] = checkGeneratedCovariates(request([{ type: 'float', config: { data_source: 'prices', column: 'temp' } }], days('2024-01-01', 3)));
    expect(source).toEqual({ path: 'body.covariates[0].config.data_source', message: expect.stringContaining('registered data sources: weather') });
    const [column] = checkGeneratedCovariates(request([{ type: 'float', config: { data_source: 'weather', column: 'station' } }], days('2024-01-01', 3)));
    expect(column).toEqual({
      path: 'body.covariates[0].config.column',
      message: expect.stringMatching(/is VARCHAR, which is no number column this server reads; numeric columns: temp/),
    });
  });
  test('a Parquet decimal of more than 38 digits is named as such, not read as wrong numbers (decision 099)', () => {
    fs.copyFileSync(path.join(import.meta.dirname, '../fixtures/beta/sales-decimal256.parquet'), path.join(dir, 'wide.parquet'));
    const [column] = checkGeneratedCovariates(request([{ type: 'float', config: { data_source: 'wide', column: 'sales' } }], days('2024-01-01', 3)));
    expect(column).toEqual({
      path: 'body.covariates[0].config.column',
      message: expect.stringMatching(
        /^column 'sales' of data source 'wide' is DECIMAL\(40,2\) of more than 38 digits, which is no number column this server reads/,
      ),
    });
  });
});

describe('temporal features', () => {
  test('components (default year) and sin/cos pairs with the given periods', () => {
    const { future } = columns(
      request(
        [{ type: 'temporal_features', config: { components: ['year', 'month', 'day_of_week'], seasonal_features: { day_of_week: 7 } } }],
        ['2024-01-01', '2024-01-02'],
        'D',
        1,
      ),
    );
    expect(Object.keys(future)).toEqual(['temporal:year', 'temporal:month', 'temporal:day_of_week', 'temporal:day_of_week_sin', 'temporal:day_of_week_cos']);
    expect(Array.from(future['temporal:day_of_week'])).toEqual([0, 1, 2]);
    expect(future['temporal:day_of_week_sin'][1]).toBeCloseTo(Math.sin((2 * Math.PI) / 7), 12);
    const defaults = columns(request([{ type: 'temporal_features', config: {} }], ['2024-01-01'], 'D', 1)).future;
    expect(Object.keys(defaults)).toHaveLength(1 + 2 * 10);
  });
  test('an unknown component is refused by the schema at its path', () => {
    const parsed = ForecastRequest.safeParse({
      series: [{ target: [1], index: ['2024-01-01'] }],
      horizon: 1,
      freq: 'D',
      covariates: [{ type: 'temporal_features', config: { components: ['fortnight'] } }],
    });
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues[0].path).toEqual(['covariates', 0, 'config', 'components', 0]);
  });
});

describe('the planner cuts generated covariates per forecast creation date', () => {
  test('calendar columns run through the horizon; exchange rates stop at the creation date', () => {
    const req = request(
      [
        { type: 'holidays', config: { country: 'US' } },
        { type: 'forex', config: { target: 'USD' } },
      ],
      days('2024-07-01', 6),
      'D',
      2,
      { fcds: [3, 6] },
    );
    const [a, b] = planForecasts(req, modelEntry('svc-global')!, covariateGenerator(req));
    expect(a.task.covariates!.future['holidays:US']).toEqual([0, 0, 0, 1, 0]);
    expect(a.task.covariates!.hist['forex:EUR/USD']).toHaveLength(3);
    expect(b.task.covariates!.future['holidays:US']).toHaveLength(8);
    expect(b.task.covariates!.hist['forex:EUR/USD']).toHaveLength(6);
  });
  test('a caller variable named like a generated column, and a covariate listed twice, are 422s', () => {
    const clash = request([{ type: 'holidays', config: { country: 'US' } }], days('2024-07-01', 6), 'D', 2, {
      future_variables: { 'holidays:US': Array(8).fill(0) },
    });
    expect(checkGeneratedCovariates(clash).map((e) => e.path)).toEqual(['body.series[0].future_variables.holidays:US']);
    const twice = request(
      [
        { type: 'temporal_features', config: {} },
        { type: 'temporal_features', config: {} },
      ],
      days('2024-07-01', 6),
    );
    expect(checkGeneratedCovariates(twice).map((e) => e.path)).toEqual(['body.covariates[1]']);
    expect(checkGeneratedCovariates(twice)[0].message).toMatch(/, as covariates\[0\] does: list each covariate once$/);
    // A component listed twice in one covariate is named as such, not as another covariate's.
    const repeated = request([{ type: 'temporal_features', config: { components: ['year', 'year'] } }], days('2024-07-01', 6));
    expect(checkGeneratedCovariates(repeated)).toEqual([
      { path: 'body.covariates[0]', message: "generates the column 'temporal:year' twice: list each component once" },
    ]);
  });
});

describe('model checks', () => {
  test('exchange rates are refused for a model that takes generated but not historical covariates', async () => {
    const { checkRequestAgainstModel } = await import('../../engine/model-checks.ts');
    const futureOnly = {
      name: 'f',
      family: 'f',
      capabilities: { covariates: ['future', 'generated'] as const, maxContext: null, needsWeights: false, global: false },
    };
    const req = request(
      [
        { type: 'holidays', config: { country: 'US' } },
        { type: 'forex', config: { target: 'USD' } },
      ],
      days('2024-07-01', 6),
    );
    let caught: unknown;
    try {
      checkRequestAgainstModel(req, futureOnly, { models: { modelsDir: '/nonexistent', onnxThreads: 1 }, floatSourcesDir });
    } catch (e) {
      caught = e;
    }
    expect(httpFieldErrors((caught as EngineError).fields!)).toEqual([
      { path: 'body.covariates[1]', message: expect.stringMatching(/^model 'f' cannot use forex: exchange rates are not known in advance.*svc-global/) },
    ]);
  });
});
