import path from 'node:path';
import { Float64, Table, tableToIPC, TimestampMillisecond, Utf8, vectorFromArray } from 'apache-arrow';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BetaResponse } from '../../engine/beta/response.ts';
import { AUTH, testConfig } from '../api/helpers.ts';
import { buildServer } from '../../api/server.ts';
import { filePart, postBeta, queryPart, RETAIL, retailQuery, tempDir, writeParquet, type Part } from './helpers.ts';

/**
 * POST /v1-beta/forecast end to end: uploads written by DuckDB (Parquet) and apache-arrow
 * (Arrow IPC), through the real multipart route, checked number by number.
 */

const dir = tempDir();
const config = testConfig();
let app: FastifyInstance;
let retail: string;

beforeAll(async () => {
  retail = await writeParquet(path.join(dir, 'retail.parquet'), RETAIL);
  app = await buildServer(config);
});
afterAll(async () => {
  await app.close();
});

const rowsOf = (body: BetaResponse, where: (i: number) => boolean) => body.data.time.map((_, i) => i).filter(where);

describe('a Parquet upload with a schema', () => {
  test('forecasts per identifier and per roll-up level, every array aligned', async () => {
    const res = await postBeta(app, [queryPart(retailQuery({}, { hierarchies: { sku: [['store']] } })), filePart('sales', retail)]);
    expect(res.statusCode).toBe(200);
    expect(res.headers['server-timing']).toMatch(/upload;dur=[\d.]+, schema;dur=[\d.]+, model;dur=[\d.]+, assemble;dur=[\d.]+/);
    const body = BetaResponse.parse(res.json());
    const { data } = body;
    // 4 (store, sku) series and 2 store roll-ups, 3 steps each.
    expect(data.time).toHaveLength(18);
    for (const column of [
      data.cutoff,
      data.lead_time,
      data.span,
      data.identifiers.store,
      data.identifiers.sku,
      data.targets.sales.quantiles.mean,
      data.targets.sales.quantiles['0.1'],
      data.targets.sales.actual,
    ]) {
      expect(column).toHaveLength(18);
    }
    expect(Object.keys(data.targets.sales.quantiles)).toEqual(['mean', '0.1', '0.9']);
    expect(data.time.slice(0, 3)).toEqual(['2024-01-15T00:00:00Z', '2024-01-16T00:00:00Z', '2024-01-17T00:00:00Z']);
    expect(new Set(data.cutoff)).toEqual(new Set(['2024-01-14T00:00:00Z']));
    expect(data.lead_time.slice(0, 3)).toEqual(['P1D', 'P2D', 'P3D']);
    expect(new Set(data.span)).toEqual(new Set(['P1D']));
    expect(data.targets.sales.actual.every((a) => a === null)).toBe(true);
    expect(body.metrics).toBeNull();

    // naive repeats the last value: sku 1 of store a ends at 14, sku 2 at 140, store a at 154.
    const mean = (store: string, sku: string | null) =>
      rowsOf(body, (i) => data.identifiers.store[i] === store && data.identifiers.sku[i] === sku).map((i) => data.targets.sales.quantiles.mean[i]);
    expect(mean('a', '1')).toEqual([14, 14, 14]);
    expect(mean('a', '2')).toEqual([140, 140, 140]);
    expect(mean('b', '2')).toEqual([240, 240, 240]);
    for (const store of ['a', 'b']) expect(mean(store, null)).toEqual(mean(store, '1').map((x, i) => x + mean(store, '2')[i]));
  });

  test('the selector keeps only the store level, aggregating sku away (its identifier array drops out)', async () => {
    const res = await postBeta(app, [queryPart(retailQuery({ selector: { sku: null } }, { hierarchies: { sku: [['store']] } })), filePart('sales', retail)]);
    const { data } = BetaResponse.parse(res.json());
    expect(Object.keys(data.identifiers)).toEqual(['store']);
    expect(data.identifiers.store).toEqual(['a', 'a', 'a', 'b', 'b', 'b']);
    expect(data.targets.sales.quantiles.mean).toEqual([154, 154, 154, 354, 354, 354]);
  });

  test('a cutoff every 7 days gives origins counted back from the end, with actuals and metrics', async () => {
    const file = await writeParquet(path.join(dir, 'ramp.parquet'), `SELECT DATE '2024-01-01' + d::INTEGER AS ts, d + 1.0 AS y FROM range(31) r(d)`);
    const query = {
      input: { source: { uri: 'inline://ramp' }, columns: { ts: { kind: 'time', frequency: '1d' }, y: { kind: 'target', aggregate: 'sum' } } },
      prediction_length: '7d',
      cutoff: [{ every: '7d' }],
      quantiles: [0.5],
    };
    const res = await postBeta(app, [queryPart(query), filePart('ramp', file)]);
    expect(res.statusCode).toBe(200);
    const body = BetaResponse.parse(res.json());
    // Data 1..31 January; the earliest origin keeps 7 days (prediction_length) of history after 1 January.
    expect([...new Set(body.data.cutoff)]).toEqual(['2024-01-10T00:00:00Z', '2024-01-17T00:00:00Z', '2024-01-24T00:00:00Z', '2024-01-31T00:00:00Z']);
    expect(body.data.time.slice(0, 7)).toEqual(Array.from({ length: 7 }, (_, k) => `2024-01-${String(11 + k).padStart(2, '0')}T00:00:00Z`));
    // From the 10th (value 10) naive forecasts 10; the actuals are 11..17.
    expect(body.data.targets.sales).toBeUndefined();
    expect(body.data.targets.y.quantiles.mean.slice(0, 7)).toEqual(Array(7).fill(10));
    expect(body.data.targets.y.actual.slice(0, 7)).toEqual([11, 12, 13, 14, 15, 16, 17]);
    expect(body.data.targets.y.actual.slice(21)).toEqual(Array(7).fill(null));
    const metrics = body.metrics!;
    expect(metrics.cutoff).toEqual(['2024-01-10T00:00:00Z', '2024-01-17T00:00:00Z', '2024-01-24T00:00:00Z']);
    expect(metrics.known_steps).toEqual([7, 7, 7]);
    expect(metrics.targets.y.mae).toEqual([4, 4, 4]);
    expect(metrics.targets.y.wape![0]).toBeCloseTo(28 / 98, 12);
    expect(metrics.targets.y.scaled_bias![0]).toBeCloseTo(-28 / 98, 12);
  });

  test('explicit cutoff dates, and every with start and end', async () => {
    const res = await postBeta(app, [
      queryPart(retailQuery({ cutoff: ['2024-01-05', { every: '2d', start: '2024-01-08', end: '2024-01-12' }], selector: { store: 'a', sku: '1' } })),
      filePart('sales', retail),
    ]);
    expect(res.statusCode).toBe(200);
    const body = BetaResponse.parse(res.json());
    expect([...new Set(body.data.cutoff)]).toEqual(['2024-01-05T00:00:00Z', '2024-01-08T00:00:00Z', '2024-01-10T00:00:00Z', '2024-01-12T00:00:00Z']);
    // sku 1 of store a is day + 1: naive misses by 1, 2, 3 (mean 2); from the 12th only the 13th and 14th are known.
    expect(body.metrics!.known_steps).toEqual([3, 3, 3, 2]);
    expect(body.metrics!.targets.sales.mae).toEqual([2, 2, 2, 1.5]);
  });

  test('every with last: the last K cutoffs, counted back from the end of the data or from end', async () => {
    const cutoffsOf = async (entry: Record<string, unknown>) => {
      const res = await postBeta(app, [queryPart(retailQuery({ cutoff: [entry], selector: { store: 'a', sku: '1' } })), filePart('sales', retail)]);
      expect(res.statusCode, res.body).toBe(200);
      return [...new Set(BetaResponse.parse(res.json()).data.cutoff)];
    };
    // The data ends on 2024-01-14.
    expect(await cutoffsOf({ every: '3d', last: 2 })).toEqual(['2024-01-11T00:00:00Z', '2024-01-14T00:00:00Z']);
    expect(await cutoffsOf({ every: '2d', end: '2024-01-10', last: 3 })).toEqual(['2024-01-06T00:00:00Z', '2024-01-08T00:00:00Z', '2024-01-10T00:00:00Z']);
    // `start` still bounds them: only two of five fit.
    expect(await cutoffsOf({ every: '2d', start: '2024-01-11', last: 5 })).toEqual(['2024-01-12T00:00:00Z', '2024-01-14T00:00:00Z']);
    const bad = await postBeta(app, [queryPart(retailQuery({ cutoff: [{ every: '1d', last: 0 }] })), filePart('sales', retail)]);
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('body.query.cutoff[0].last');
  });

  test("aets forecasts a weekly pattern with the 1d frequency's season of 7", async () => {
    const file = await writeParquet(
      path.join(dir, 'weekly.parquet'),
      `SELECT DATE '2024-01-01' + d::INTEGER AS ts, 50 + 10 * (d % 7) + (d % 3) * 0.5 AS y FROM range(70) r(d)`,
    );
    const query = {
      input: { source: { uri: 'inline://w' }, columns: { ts: { kind: 'time', frequency: '1d' }, y: { kind: 'target', aggregate: 'mean' } } },
      prediction_length: '1w',
    };
    const res = await postBeta(app, [queryPart(query), filePart('w', file)], 'aets');
    expect(res.statusCode).toBe(200);
    const mean = BetaResponse.parse(res.json()).data.targets.y.quantiles.mean;
    expect(mean).toHaveLength(7);
    // 70 days from Monday 1 January: the next week starts at d % 7 = 0 (about 50) and climbs to about 110.
    expect(mean[0]).toBeLessThan(60);
    expect(mean[6]).toBeGreaterThan(100);
  });
});

describe('Arrow IPC uploads', () => {
  const days = 14;
  const arrowTable = () => {
    const ts: number[] = [];
    const store: string[] = [];
    const sales: number[] = [];
    for (const s of ['a', 'b']) {
      for (let d = 0; d < days; d++) {
        ts.push(Date.UTC(2024, 0, 1 + d));
        store.push(s);
        sales.push(d + 1 + (s === 'b' ? 100 : 0));
      }
    }
    return new Table({
      ts: vectorFromArray(ts, new TimestampMillisecond()),
      store: vectorFromArray(store, new Utf8()),
      sales: vectorFromArray(sales, new Float64()),
    });
  };
  const query = {
    input: {
      source: { uri: 'inline://sales' },
      columns: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sales: { kind: 'target', aggregate: 'sum' } },
    },
    prediction_length: '2d',
    quantiles: [0.5],
    cutoff: [{ every: '7d' }],
  };
  const arrowPart = (bytes: Uint8Array, filename: string): Part => ({
    name: 'sales',
    data: Buffer.from(bytes),
    filename,
    contentType: 'application/vnd.apache.arrow.file',
  });

  test('file and stream formats (apache-arrow) answer as the same data in Parquet (DuckDB) does', async () => {
    const parquet = await writeParquet(
      path.join(dir, 'same.parquet'),
      `SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS ts, s AS store, d + 1.0 + (s = 'b')::INT * 100 AS sales FROM (VALUES ('a'), ('b')) t(s), range(${days}) r(d)`,
    );
    const fromParquet = (await postBeta(app, [queryPart(query), filePart('sales', parquet)])).json();
    const file = await postBeta(app, [queryPart(query), arrowPart(tableToIPC(arrowTable(), 'file'), 'sales.arrow')]);
    const stream = await postBeta(app, [queryPart(query), arrowPart(tableToIPC(arrowTable(), 'stream'), 'sales.arrows')]);
    expect(file.statusCode).toBe(200);
    expect(stream.statusCode).toBe(200);
    expect(file.json()).toEqual(fromParquet);
    expect(stream.json()).toEqual(fromParquet);
    expect(fromParquet.data.identifiers.store).toContain('b');
  });

  test('a pyarrow file with a time-zoned timestamp and a dictionary-encoded identifier', async () => {
    const res = await postBeta(app, [queryPart({ ...query, cutoff: undefined }), filePart('sales', 'test/fixtures/beta/sales-pyarrow.arrow')]);
    expect(res.statusCode).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    expect(data.identifiers.store).toEqual(['a', 'a', 'b', 'b']);
    expect(data.targets.sales.quantiles.mean).toEqual([14, 14, 114, 114]);
    expect(data.cutoff[0]).toBe('2024-01-14T00:00:00Z');
  });

  test('a Parquet decimal of more than 38 digits is refused at its column, not misread', async () => {
    const res = await postBeta(app, [queryPart({ ...query, cutoff: undefined }), filePart('sales', 'test/fixtures/beta/sales-decimal256.parquet')]);
    expect(res.statusCode).toBe(422);
    const problem = res.json();
    expect(problem.errors).toEqual([
      {
        path: 'body.query.input.columns.sales',
        message: expect.stringMatching(/^column 'sales' is a Parquet DECIMAL\(40,2\); decimals of more than 38 digits are not read correctly here/),
      },
    ]);
  });

  test.each([
    ['sales-lz4.arrow', 'LZ4'],
    ['sales-lz4.arrows', 'LZ4'],
    ['sales-zstd.arrow', 'ZSTD'],
  ])('compressed Arrow from pyarrow (%s) is refused: %s is not supported', async (fixture, codec) => {
    const res = await postBeta(app, [queryPart(query), filePart('sales', `test/fixtures/beta/${fixture}`)]);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    const problem = res.json();
    expect(problem.code).toBe('invalid_request');
    expect(problem.detail).toMatch(
      new RegExp(`part 'sales' is an Arrow file compressed with ${codec}.*compressed Arrow is not supported, because this server cannot decompress ${codec}`),
    );
    expect(problem.errors[0].path).toBe('body.sales');
    expect(problem.detail).not.toMatch(/ZSTD \(ZSTD\)/);
  });
});

/**
 * The beta answer for the RETAIL upload equals svc-global on the stable endpoint given the same four
 * series (and, with `hist`, each day's historical variables).
 */
async function expectAsStableSvcGlobal(data: BetaResponse['data'], hist?: (store: string, days: readonly string[]) => Record<string, number[]>): Promise<void> {
  const series = [
    ['a', 1],
    ['a', 2],
    ['b', 1],
    ['b', 2],
  ] as const;
  const days = Array.from({ length: 14 }, (_, d) => `2024-01-${String(d + 1).padStart(2, '0')}`);
  const stable = await app.inject({
    method: 'POST',
    url: '/forecast?model=svc-global',
    headers: AUTH,
    payload: {
      series: series.map(([store, sku]) => ({
        target: days.map((_, d) => (d + 1) * (sku === 2 ? 10 : 1) + (store === 'b' ? 100 : 0)),
        index: days,
        ...(hist && { hist_variables: hist(store, days) }),
      })),
      horizon: 3,
      freq: 'D',
      quantiles: [0.1, 0.9],
    },
  });
  expect(stable.statusCode).toBe(200);
  series.forEach(([store, sku], k) => {
    const rows = rowsOf({ data } as BetaResponse, (i) => data.identifiers.store[i] === store && data.identifiers.sku[i] === String(sku));
    expect(rows.map((i) => data.targets.sales.quantiles.mean[i])).toEqual(stable.json().series[k][0].prediction.mean);
  });
}

describe('global models on the beta endpoint', () => {
  test('svc-global forecasts an upload as the stable endpoint forecasts the same series', async () => {
    const res = await postBeta(app, [queryPart(retailQuery()), filePart('sales', retail)], 'svc-global');
    expect(res.statusCode).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    await expectAsStableSvcGlobal(data);
  });
});

describe('historical covariates on the beta endpoint', () => {
  test('a historical column reaches svc-global as the stable endpoint hands it hist_variables', async () => {
    const file = await writeParquet(
      path.join(dir, 'priced.parquet'),
      `SELECT *, (extract(day FROM ts) % 3)::DOUBLE + (CASE WHEN store = 'b' THEN 0.5 ELSE 0 END) AS price FROM (${RETAIL})`,
    );
    const columns = {
      ts: { kind: 'time', frequency: '1d' },
      store: 'identifier',
      sku: 'identifier',
      sales: { kind: 'target', aggregate: 'sum' },
      price: 'historical',
    };
    const res = await postBeta(app, [queryPart(retailQuery({}, { columns })), filePart('sales', file)], 'svc-global');
    expect(res.statusCode).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    const without = BetaResponse.parse((await postBeta(app, [queryPart(retailQuery()), filePart('sales', retail)], 'svc-global')).json());
    expect(data.targets.sales.quantiles.mean).not.toEqual(without.data.targets.sales.quantiles.mean);
    await expectAsStableSvcGlobal(data, (store, days) => ({ c0: days.map((_, d) => ((d + 1) % 3) + (store === 'b' ? 0.5 : 0)) }));
  });
});

describe('models of several seasonalities and combinations on the beta endpoint', () => {
  // Three weeks of hourly data with a daily and a weekly cycle.
  const hourly = `SELECT TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (h) HOUR AS ts,
      100 + 10 * sin(2 * pi() * h / 24) + 8 * cos(2 * pi() * h / 168) + (h * 7919) % 5 AS y FROM range(504) r(h)`;
  const query = (extra: Record<string, unknown> = {}) => ({
    input: { source: { uri: 'inline://load' }, columns: { ts: { kind: 'time', frequency: '1h' }, y: { kind: 'target', aggregate: 'sum' } } },
    prediction_length: '24h',
    quantiles: [0.1, 0.9],
    ...extra,
  });

  test('mstl gets the day and the week of a 1h frequency, as the stable endpoint gives them for H', async () => {
    const file = await writeParquet(path.join(dir, 'load.parquet'), hourly);
    const res = await postBeta(app, [queryPart(query()), filePart('load', file)], 'mstl');
    expect(res.statusCode).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    const index = Array.from({ length: 504 }, (_, h) => new Date(Date.UTC(2024, 0, 1) + h * 3_600_000).toISOString().slice(0, 19));
    const target = index.map((_, h) => 100 + 10 * Math.sin((2 * Math.PI * h) / 24) + 8 * Math.cos((2 * Math.PI * h) / 168) + ((h * 7919) % 5));
    const stable = await app.inject({
      method: 'POST',
      url: '/forecast?model=mstl',
      headers: AUTH,
      payload: { series: [{ target, index }], horizon: 24, freq: 'H', quantiles: [0.1, 0.9] },
    });
    const expected = stable.json().series[0][0].prediction.mean as number[];
    data.targets.y.quantiles.mean.forEach((m, j) => expect(m).toBeCloseTo(expected[j], 9));
  });

  test('ensemble forecasts an upload with its default members and conformal quantiles', async () => {
    const file = await writeParquet(path.join(dir, 'load2.parquet'), hourly);
    const res = await postBeta(app, [queryPart(query()), filePart('load', file)], 'ensemble');
    expect(res.statusCode).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    const { mean, '0.1': low, '0.9': high } = data.targets.y.quantiles as Record<string, number[]>;
    expect(mean).toHaveLength(24);
    mean.forEach((m, j) => {
      expect(low[j]).toBeLessThanOrEqual(m);
      expect(high[j]).toBeGreaterThanOrEqual(m);
    });
  });
});

describe('refit policy on the beta endpoint', () => {
  test('theta keeps its fit between refit cutoffs; data.refitted says which; a model that cannot keep one refits every cutoff', async () => {
    const query = (refit?: unknown) => retailQuery({ cutoff: [{ every: '1d' }], quantiles: [0.5], ...(refit !== undefined && { refit }) });
    const every = BetaResponse.parse((await postBeta(app, [queryPart(query()), filePart('sales', retail)], 'theta')).json());
    expect(every.data.refitted).toBeUndefined();
    const once = BetaResponse.parse((await postBeta(app, [queryPart(query('once')), filePart('sales', retail)], 'theta')).json());
    const cutoffs = [...new Set(once.data.cutoff)].sort();
    const rows = (cutoff: string) => once.data.cutoff.flatMap((c, i) => (c === cutoff ? [i] : []));
    // The first cutoff is fitted; every later one keeps that fit.
    expect(rows(cutoffs[0]).every((i) => once.data.refitted![i])).toBe(true);
    expect(rows(cutoffs.at(-1)!).every((i) => !once.data.refitted![i])).toBe(true);
    const mean = (body: BetaResponse, i: number) => body.data.targets.sales.quantiles.mean[i];
    rows(cutoffs[0]).forEach((i) => expect(mean(once, i)).toBe(mean(every, i)));
    expect(rows(cutoffs.at(-1)!).some((i) => mean(once, i) !== mean(every, i))).toBe(true);
    const naive = BetaResponse.parse((await postBeta(app, [queryPart(query(2)), filePart('sales', retail)], 'naive')).json());
    expect(naive.data.refitted!.every(Boolean)).toBe(true);
    const bad = await postBeta(app, [queryPart(query(0)), filePart('sales', retail)], 'theta');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toMatch(/refit/);
  });
});
