import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testConfig } from '../api/helpers.ts';
import { buildServer } from '../../api/server.ts';
import { filePart, postBeta, queryPart, RETAIL, retailQuery, tempDir, writeParquet, type Part } from './helpers.ts';

/**
 * POST /v1-beta/forecast refusing what it cannot use: malformed uploads and queries, each answered
 * with a clear problem+json naming the field, the upload limits, and the upload's files removed
 * whatever the outcome.
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
    ['an unknown property', retailQuery({ horizon: 3 }), 'body.query.horizon', /Unrecognized key/],
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
