/**
 * tabpfn-ts through the service: POST /forecast (with numeric and string known-future
 * covariates), warm-up, a job, the beta interface, and the not-installed answer. The adapter reads
 * the request's timestamps (calendar features), so the expected numbers come from tasks with the
 * times of the request's index and horizon.
 */
import { describe, expect, test } from 'vitest';
import { BetaResponse } from '../../../engine/beta/response.ts';
import { forecastTabPFNTS } from '../../../models/foundation/tabpfn-ts.ts';
import type { ForecastTask } from '../../../models/types.ts';
import { AUTH } from '../../api/helpers.ts';
import { filePart, postBeta, queryPart, retailQuery } from '../../beta/helpers.ts';
import {
  dailyForecastBody,
  describeNotInstalled,
  expectCloseAtLevel,
  expectForecastsMatchAdapter,
  expectJobMatchesForecast,
  forecastOnFixture,
  hourlyForecastBody,
  hourlySeries,
  postForecast,
  useFixtureJobsStack,
  useRetailParquet,
} from './service-helpers.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

type Body = {
  series: { target: number[]; index: string[]; future_variables?: Record<string, (number | string)[]>; hist_variables?: Record<string, number[]> }[];
  horizon: number;
  quantiles: number[];
};

/** Tasks of a body's series: `step` milliseconds apart from each series' first index entry (UTC wall clock). */
function tasksOf(body: Body, step: number): ForecastTask[] {
  return body.series.map((s) => {
    const start = Date.parse(`${s.index[0]}Z`);
    const hasCovariates = s.future_variables || s.hist_variables;
    return {
      history: Float64Array.from(s.target),
      horizon: body.horizon,
      quantiles: body.quantiles,
      seasonLength: 1,
      times: Float64Array.from({ length: s.target.length + body.horizon }, (_, i) => start + i * step),
      ...(hasCovariates && { covariates: { hist: s.hist_variables ?? {}, static: {}, future: s.future_variables ?? {} } }),
    };
  });
}

/** A text known-future variable over history and horizon: the shift of the hour. */
const shift = (n: number) => Array.from({ length: n }, (_, i) => ['night', 'day', 'day', 'evening'][Math.floor(i / 6) % 4]);
const flag = (n: number) => Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0));

describe('tabpfn-ts installed in MODELS_DIR', () => {
  const server = useFixtureJobsStack('tabpfn-ts-api-test');
  const retail = useRetailParquet();

  test('GET /warmup loads its session', async () => {
    const res = await server.app.inject({ method: 'GET', url: '/warmup?model=tabpfn-ts', headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ model: 'tabpfn-ts', status: 'ready' });
  });

  test('POST /forecast answers the adapter forecast, median and quantiles', async () => {
    const body = hourlyForecastBody() as Body;
    const res = await postForecast(server.app, 'tabpfn-ts', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabpfn-ts', forecastTabPFNTS, tasksOf(body, HOUR)), body);
  });

  test('string and numeric known-future covariates are feature columns: the adapter numbers, and they change the forecast', async () => {
    const plain = hourlyForecastBody() as Body;
    const body = hourlyForecastBody({
      series: plain.series.map((s) => ({
        ...s,
        future_variables: { shift: shift(s.target.length + plain.horizon), flag: flag(s.target.length + plain.horizon) },
      })),
    }) as Body;
    const res = await postForecast(server.app, 'tabpfn-ts', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabpfn-ts', forecastTabPFNTS, tasksOf(body, HOUR)), body);
    const without = (await postForecast(server.app, 'tabpfn-ts', plain)).json();
    expect(res.json().series[0][0].prediction.mean).not.toEqual(without.series[0][0].prediction.mean);
  });

  test('past-only covariates are columns too (missing over the horizon), as in the reference frame; generated ones are taken', async () => {
    const plain = dailyForecastBody() as Body;
    const body = { ...plain, series: plain.series.map((s) => ({ ...s, hist_variables: { load: s.target.map((v) => v * 2) } })) } as Body;
    const res = await postForecast(server.app, 'tabpfn-ts', body);
    expect(res.statusCode, res.body).toBe(200);
    expectForecastsMatchAdapter(res.json(), await forecastOnFixture('tabpfn-ts', forecastTabPFNTS, tasksOf(body, DAY)), body);
    const generated = await postForecast(
      server.app,
      'tabpfn-ts',
      dailyForecastBody({ covariates: [{ type: 'temporal_features', config: { components: ['day_of_week'] } }] }),
    );
    expect(generated.statusCode, generated.body).toBe(200);
  });

  test('a job gives the numbers of POST /forecast, backtest dates included', async () => {
    const body = hourlyForecastBody({ series: [{ ...hourlySeries(90), fcds: [60, 90] }, hourlySeries(30, 5)] });
    await expectJobMatchesForecast(server.app, 'tabpfn-ts', body, [2, 1]);
  }, 90_000);

  test('the beta interface forecasts every series and roll-up with the adapter numbers', async () => {
    const res = await postBeta(server.app, [queryPart(retailQuery({}, { hierarchies: { sku: [['store']] } })), filePart('sales', retail.file)], 'tabpfn-ts');
    expect(res.statusCode, res.body).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    const rows = data.time.map((_, i) => i).filter((i) => data.identifiers.store[i] === 'a' && data.identifiers.sku[i] === '2');
    // Store a, sku 2: sales 10, 20, ..., 140 over the 14 days from 2024-01-01 (RETAIL).
    const target = Array.from({ length: 14 }, (_, d) => (d + 1) * 10);
    const index = target.map((_, d) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 19));
    const [expected] = await forecastOnFixture('tabpfn-ts', forecastTabPFNTS, tasksOf({ series: [{ target, index }], horizon: 3, quantiles: [0.1, 0.9] }, DAY));
    const forecast = (key: string) => rows.map((i) => data.targets.sales.quantiles[key][i]);
    expectCloseAtLevel(forecast('mean'), expected.mean, target);
    expectCloseAtLevel(forecast('0.1'), expected.quantiles[0], target);
    expectCloseAtLevel(forecast('0.9'), expected.quantiles[1], target);
  });
});

describeNotInstalled('tabpfn-ts', dailyForecastBody());
