import fs from 'node:fs';
import path from 'node:path';
import { Float64, Table, tableToIPC, TimestampMillisecond, Utf8, vectorFromArray } from 'apache-arrow';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BetaResponse } from '../../engine/beta/response.ts';
import { testConfig } from '../api/helpers.ts';
import { buildServer } from '../../api/server.ts';
import { filePart, postBeta, queryPart, tempDir, writeParquet, type Part } from './helpers.ts';

/**
 * POST /v1-beta/forecast end to end: uploads written by DuckDB (Parquet) and apache-arrow
 * (Arrow IPC), through the real multipart route, checked number by number.
 */

const dir = tempDir();
const config = testConfig();
let app: FastifyInstance;

/** 14 days, stores a and b, skus 1 and 2: sales = day + 1, times 10 for sku 2, plus 100 in store b. */
const RETAIL = `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS ts, store, sku, (d + 1) * (CASE WHEN sku = 2 THEN 10 ELSE 1 END) + (CASE WHEN store = 'b' THEN 100 ELSE 0 END) AS sales
  FROM range(14) r(d), (VALUES ('a'), ('b')) s(store), (VALUES (1), (2)) k(sku)`;
let retail: string;

const retailQuery = (extra: Record<string, unknown> = {}, input: Record<string, unknown> = {}) => ({
  input: {
    source: { uri: 'inline://sales' },
    columns: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sku: 'identifier', sales: { kind: 'target', aggregate: 'sum' } },
    ...input,
  },
  prediction_length: '3d',
  quantiles: [0.1, 0.9],
  ...extra,
});

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
  });
});

describe('malformed uploads get a clear problem+json', () => {
  const send = (parts: Part[], model?: string) => postBeta(app, parts, model);
  const expectProblem = async (res: Awaited<ReturnType<typeof send>>, status: number, code: string, path?: string, detail?: RegExp) => {
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    const body = res.json();
    expect({ status: res.statusCode, code: body.code }).toEqual({ status, code });
    if (path) expect(body.errors.map((e: { path: string }) => e.path)).toContain(path);
    if (detail) expect(JSON.stringify(body)).toMatch(detail);
    return body;
  };

  test('a URI naming a part that was not sent', async () => {
    const res = await send([queryPart(retailQuery({}, { source: { uri: 'inline://orders' } })), filePart('sales', retail)]);
    const body = await expectProblem(
      res,
      422,
      'invalid_request',
      'body.query.input.source.uri',
      /the query reads part 'orders' \(inline:\/\/orders\), but no part of that name was uploaded; parts uploaded: 'sales'/,
    );
    // The unread part is reported in the same answer.
    expect(body.errors.map((e: { path: string }) => e.path)).toEqual(['body.query.input.source.uri', 'body.sales']);
  });

  test('a URI with the file name resolves nothing, and the message says so', async () => {
    const res = await send([
      queryPart(retailQuery({}, { source: { uri: 'inline://sales.parquet' } })),
      { ...filePart('sales', retail), filename: 'sales.parquet' },
    ]);
    await expectProblem(res, 422, 'invalid_request', 'body.query.input.source.uri', /A URI names the part, not its file: did you mean inline:\/\/sales\?/);
  });

  test('a part the query does not read', async () => {
    const res = await send([queryPart(retailQuery()), filePart('sales', retail), filePart('weather', retail)]);
    await expectProblem(res, 422, 'invalid_request', 'body.weather', /part 'weather' was uploaded but the query does not read it/);
  });

  test('a part that is neither Parquet nor Arrow', async () => {
    const res = await send([
      queryPart(retailQuery()),
      { name: 'sales', data: 'ts,store,sales\n2024-01-01,a,1\n', filename: 'sales.csv', contentType: 'text/csv' },
    ]);
    await expectProblem(res, 422, 'invalid_request', 'body.sales', /part 'sales' is neither Parquet nor Arrow IPC: it looks like text \(CSV is not accepted\)/);
  });

  test('a Parquet part cut short', async () => {
    const bytes = fs.readFileSync(retail);
    const res = await send([queryPart(retailQuery()), { name: 'sales', data: bytes.subarray(0, bytes.length - 100), filename: 'x.parquet' }]);
    await expectProblem(res, 422, 'invalid_request', 'body.sales', /no Parquet footer/);
  });

  test('no query part; a query that is not JSON', async () => {
    await expectProblem(await send([filePart('sales', retail)]), 422, 'invalid_request', 'body.query');
    await expectProblem(
      await send([{ name: 'query', data: '{"input": ', contentType: 'application/json' }, filePart('sales', retail)]),
      400,
      'invalid_json',
      'body.query',
    );
    await expectProblem(
      await send([{ name: 'query', data: '{"input": ', filename: 'query.json', contentType: 'application/json' }, filePart('sales', retail)]),
      400,
      'invalid_json',
      'body.query',
    );
  });

  test('the query part may be a file part (curl -F query=@query.json)', async () => {
    const res = await send([
      { name: 'query', data: JSON.stringify(retailQuery()), filename: 'query.json', contentType: 'application/json' },
      filePart('sales', retail),
    ]);
    expect(res.statusCode).toBe(200);
  });

  test.each<[string, Record<string, unknown>, string, RegExp]>([
    ['an unknown property', retailQuery({ horizon: 3 }), 'body.query', /Unrecognized key/],
    ['an ambiguous duration', retailQuery({ prediction_length: '3m' }), 'body.query.prediction_length', /ambiguous/],
    [
      'a duration that is no whole number of steps',
      retailQuery({ prediction_length: '36h' }),
      'body.query.prediction_length',
      /not a whole number of 1d steps/,
    ],
    ['months with a daily frequency', retailQuery({ prediction_length: '1mo' }), 'body.query.prediction_length', /calendar months vary in length/],
    [
      'a target without aggregate',
      retailQuery({}, { columns: { ts: { kind: 'time', frequency: '1d' }, sales: { kind: 'target' } } }),
      'body.query.input.columns.sales.aggregate',
      /expected one of/,
    ],
    [
      'an unknown aggregate',
      retailQuery({}, { columns: { ts: { kind: 'time', frequency: '1d' }, sales: { kind: 'target', aggregate: 'avg' } } }),
      'body.query.input.columns.sales.aggregate',
      /sum/,
    ],
    [
      'an unknown impute rule',
      retailQuery({}, { columns: { ts: { kind: 'time', frequency: '1d' }, sales: { kind: 'target', aggregate: 'sum', impute: 'mean' } } }),
      'body.query.input.columns.sales.impute',
      /forward_fill/,
    ],
    [
      'an unknown role',
      retailQuery({}, { columns: { ts: { kind: 'time', frequency: '1d' }, store: 'id', sales: { kind: 'target', aggregate: 'sum' } } }),
      'body.query.input.columns.store',
      /a column role is/,
    ],
    [
      'no time column',
      retailQuery({}, { columns: { store: 'identifier', sales: { kind: 'target', aggregate: 'sum' } } }),
      'body.query.input.columns',
      /name exactly one column with .*kind.*time/,
    ],
    [
      'both columns and schema',
      retailQuery({}, { schema: { ts: { kind: 'time', frequency: '1d' } } }),
      'body.query.input.columns',
      /exactly one of input.columns and input.schema/,
    ],
    [
      'a source URI of another scheme',
      retailQuery({}, { source: { uri: 's3://bucket/sales.parquet' } }),
      'body.query.input.source.uri',
      /inline:\/\/<part name>/,
    ],
    [
      'a hierarchy over a non-identifier',
      retailQuery({}, { hierarchies: { sku: [['region']] } }),
      'body.query.input.hierarchies.sku.0.0',
      /'region' is not an identifier column/,
    ],
    ['a selector on a non-identifier', retailQuery({ selector: { sales: 'any' } }), 'body.query.selector.sales', /not an identifier column/],
    ['lead_time selection', retailQuery({ lead_time: ['P1D'] }), 'body.query.lead_time', /not supported by this server yet/],
    ['a cutoff off the grid', retailQuery({ cutoff: ['2024-01-05T12:00:00Z'] }), 'body.query.cutoff[0]', /not on the 1d grid/],
    [
      'a covariate schema of another version',
      retailQuery({
        covariates: [{ schema: { version: '0.2', source: { uri: 'inline://w' }, columns: { t: 'historical' } }, on: [{ base: 'store', attached: 't' }] }],
      }),
      'body.query.covariates[0].schema.version',
      /0\.3/,
    ],
  ])('query validation: %s', async (_name, query, path, message) => {
    const res = await send([queryPart(query), filePart('sales', retail)]);
    await expectProblem(res, 422, 'invalid_request', path.replace(/\.(\d+)(?=\.|$)/g, '[$1]'), message);
  });

  test('a column the data does not have, and a gap without an impute rule', async () => {
    await expectProblem(
      await send([
        queryPart(retailQuery({}, { columns: { ts: { kind: 'time', frequency: '1d' }, units: { kind: 'target', aggregate: 'sum' } } })),
        filePart('sales', retail),
      ]),
      422,
      'invalid_request',
      'body.query.input.columns.units',
      /no column 'units'/,
    );
    const gappy = await writeParquet(
      path.join(dir, 'gappy.parquet'),
      `SELECT * FROM (${RETAIL}) WHERE NOT (store = 'b' AND sku = 2 AND ts = TIMESTAMP '2024-01-05')`,
    );
    await expectProblem(
      await send([queryPart(retailQuery()), filePart('sales', gappy)]),
      422,
      'invalid_request',
      'body.query.input.columns.sales.impute',
      /store=b, sku=2 \(1 missing step\(s\), the first at 2024-01-05T00:00:00Z\)/,
    );
  });

  test('a historical covariate with a model that does not use covariates', async () => {
    const res = await send([
      queryPart(
        retailQuery(
          {},
          { columns: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sku: 'historical', sales: { kind: 'target', aggregate: 'sum' } } },
        ),
      ),
      filePart('sales', retail),
    ]);
    await expectProblem(res, 422, 'invalid_request', 'body.query.input.columns.sku', /model 'naive' does not use historical covariates/);
  });

  test('the model: required, known, runnable here', async () => {
    const { payload, headers } = (await import('./helpers.ts')).multipartBody([queryPart(retailQuery()), filePart('sales', retail)]);
    const noModel = await app.inject({ method: 'POST', url: '/v1-beta/forecast', headers: { ...headers, authorization: 'Bearer test-key-alice' }, payload });
    await expectProblem(noModel, 422, 'invalid_request', 'query.model');
    await expectProblem(await send([queryPart(retailQuery()), filePart('sales', retail)], 'chronos-2'), 422, 'model_unavailable', 'query.model');
  });

  test('not multipart: 415 with what to send', async () => {
    const json = await app.inject({
      method: 'POST',
      url: '/v1-beta/forecast?model=naive',
      headers: { authorization: 'Bearer test-key-alice' },
      payload: retailQuery(),
    });
    await expectProblem(json, 415, 'unsupported_media_type', undefined, /multipart\/form-data: a part named \\"query\\"/);
    const text = await app.inject({
      method: 'POST',
      url: '/v1-beta/forecast?model=naive',
      headers: { authorization: 'Bearer test-key-alice', 'content-type': 'text/plain' },
      payload: 'hello',
    });
    await expectProblem(text, 415, 'unsupported_media_type');
  });

  test('a data part sent as a form field, and a part sent twice', async () => {
    await expectProblem(await send([queryPart(retailQuery()), { name: 'sales', data: 'PAR1' }]), 422, 'invalid_request', 'body.sales', /sent as a form field/);
    await expectProblem(
      await send([queryPart(retailQuery()), filePart('sales', retail), filePart('sales', retail)]),
      422,
      'invalid_request',
      'body.sales',
      /sent twice/,
    );
  });

  test('a malformed multipart body', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1-beta/forecast?model=naive',
      headers: { authorization: 'Bearer test-key-alice', 'content-type': 'multipart/form-data; boundary=xyz' },
      payload: '--xyz\r\nContent-Disposition: form-data; name="query"\r\n\r\n{"a"',
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.statusCode).toBeLessThan(500);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  test('no key: 401', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1-beta/forecast?model=naive', payload: {} });
    expect(res.statusCode).toBe(401);
  });
});

describe('the upload size limit and temporary files', () => {
  test('an upload over BETA_MAX_UPLOAD_BYTES is 413, and no part file is left behind', async () => {
    const small = await buildServer({ ...config, beta: { ...config.beta, maxUploadBytes: 2048 } });
    try {
      const res = await postBeta(small, [queryPart(retailQuery()), { name: 'sales', data: Buffer.alloc(4096, 1), filename: 'big.parquet' }]);
      expect(res.statusCode).toBe(413);
      expect(res.json()).toMatchObject({ code: 'payload_too_large', detail: expect.stringMatching(/2048 bytes, BETA_MAX_UPLOAD_BYTES/) });
    } finally {
      await small.close();
    }
    expect(fs.readdirSync(path.join(config.dataDir, 'beta-uploads'))).toEqual([]);
  });

  test('an upload that needs more memory than BETA_DUCKDB_MEMORY_LIMIT is a 503 saying so, not a server error', async () => {
    // 400 series x 800 hours: its aggregation needs more than DuckDB is given here, spilling included.
    const large = await writeParquet(
      path.join(dir, 'large.parquet'),
      `SELECT TIMESTAMP '2024-01-01' + to_hours(h) AS ts, 's' || s AS store, (h * 7 + s) % 13 + 1.0 AS sales FROM range(800) a(h), range(400) b(s)`,
    );
    const tight = await buildServer({ ...config, beta: { ...config.beta, duckdbMemoryLimit: '4MB' } });
    try {
      const query = {
        input: {
          source: { uri: 'inline://sales' },
          schema: { ts: { kind: 'time', frequency: '1h' }, store: 'identifier', sales: { kind: 'target', aggregate: 'sum' } },
        },
        prediction_length: '2h',
      };
      const res = await postBeta(tight, [queryPart(query), filePart('sales', large)]);
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ code: 'insufficient_memory', detail: expect.stringMatching(/BETA_DUCKDB_MEMORY_LIMIT/) });
      // The same upload within DuckDB's default limit is forecast.
      expect((await postBeta(app, [queryPart(query), filePart('sales', large)])).statusCode).toBe(200);
    } finally {
      await tight.close();
    }
  });

  test('part files are removed after a success and after a failure', async () => {
    const uploads = path.join(config.dataDir, 'beta-uploads');
    expect((await postBeta(app, [queryPart(retailQuery()), filePart('sales', retail)])).statusCode).toBe(200);
    expect(fs.readdirSync(uploads)).toEqual([]);
    expect((await postBeta(app, [queryPart(retailQuery()), filePart('sales', 'test/fixtures/beta/sales-lz4.arrow')])).statusCode).toBe(422);
    expect(fs.readdirSync(uploads)).toEqual([]);
    expect((await postBeta(app, [queryPart({ bad: true }), filePart('sales', retail)])).statusCode).toBe(422);
    expect(fs.readdirSync(uploads)).toEqual([]);
  });
});

test("at start-up, upload directories abandoned for a day are swept; recent ones (another process's) are kept", async () => {
  const shared = testConfig();
  const uploads = path.join(shared.dataDir, 'beta-uploads');
  fs.mkdirSync(path.join(uploads, 'abandoned'), { recursive: true });
  fs.mkdirSync(path.join(uploads, 'in-flight'), { recursive: true });
  const twoDaysAgo = new Date(Date.now() - 48 * 3600 * 1000);
  fs.utimesSync(path.join(uploads, 'abandoned'), twoDaysAgo, twoDaysAgo);
  const server = await buildServer(shared);
  await server.close();
  expect(fs.readdirSync(uploads)).toEqual(['in-flight']);
});
