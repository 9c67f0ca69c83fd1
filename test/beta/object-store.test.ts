import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildServer } from '../../api/server.ts';
import { BetaResponse } from '../../engine/beta/response.ts';
import { testConfig } from '../api/helpers.ts';
import { filePart, postBeta, queryPart, tempDir, writeParquet } from './helpers.ts';

/**
 * Object-store locators: `input.source` is a URL that DuckDB's httpfs extension reads (installed
 * by `npm test`'s set-up, scripts/ensure-duckdb-httpfs.mjs). A local HTTP server stands in for the
 * store; it answers ranged reads as object stores do, and counts the requests it gets.
 */

const dir = tempDir('beta-object-store-');
let app: FastifyInstance;
let s3App: FastifyInstance;
let store: http.Server;
let base: string;
const requests: string[] = [];
const authorizations: string[] = [];

/** Serves the files of `dir` with HEAD and byte-range GET, as an object store's HTTP API does. */
function objectStore(root: string): http.Server {
  return http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (req.headers.authorization) authorizations.push(req.headers.authorization);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('list-type') === '2') {
      res.writeHead(200, { 'content-type': 'application/xml' }).end(listObjects(root, url));
      return;
    }
    const file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root) || !fs.existsSync(file)) {
      res.writeHead(404).end('no such object');
      return;
    }
    const body = fs.readFileSync(file);
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    const [start, end] = range ? [Number(range[1]), range[2] ? Number(range[2]) : body.length - 1] : [0, body.length - 1];
    res.writeHead(range ? 206 : 200, {
      'accept-ranges': 'bytes',
      'content-type': 'application/octet-stream',
      'content-length': end - start + 1,
      ...(range && { 'content-range': `bytes ${start}-${end}/${body.length}` }),
    });
    res.end(req.method === 'HEAD' ? undefined : body.subarray(start, end + 1));
  });
}

/** S3's ListObjectsV2 answer for a path-style bucket URL (`/bucket?list-type=2&prefix=...`), as globs ask for it. */
function listObjects(root: string, url: URL): string {
  const bucket = url.pathname.split('/').filter(Boolean)[0];
  const prefix = url.searchParams.get('prefix') ?? '';
  const keys = (fs.readdirSync(path.join(root, bucket), { recursive: true }) as string[])
    .filter((key) => fs.statSync(path.join(root, bucket, key)).isFile() && key.startsWith(prefix))
    .sort();
  const contents = keys.map(
    (key) =>
      `<Contents><Key>${key}</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>"${key.length}"</ETag><Size>${fs.statSync(path.join(root, bucket, key)).size}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
  );
  return `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${prefix}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents.join('')}</ListBucketResult>`;
}

const rows = `SELECT DATE '2024-01-01' + d::INTEGER AS ts, s AS store, d * (CASE s WHEN 'a' THEN 1 ELSE 3 END) + 0.5 AS sales
  FROM range(30) r(d), (VALUES ('a'), ('b')) v(s)`;

const query = (source: unknown) => ({
  input: { source, schema: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sales: { kind: 'target', aggregate: 'sum' } } },
  prediction_length: '3d',
  quantiles: [0.1, 0.9],
});

beforeAll(async () => {
  await writeParquet(path.join(dir, 'sales.parquet'), rows);
  store = objectStore(dir);
  await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(store.address() as AddressInfo).port}`;
  const config = testConfig();
  app = await buildServer({ ...config, beta: { ...config.beta, objectStores: ['http'] } });
  // s3:// as an operator configures it: a DuckDB secret in BETA_DUCKDB_INIT, here pointing at the
  // local store with path-style URLs (the bucket is the first path segment).
  const { port } = store.address() as AddressInfo;
  const initSql = `CREATE SECRET store (TYPE s3, KEY_ID 'test-key', SECRET 'test-secret', REGION 'us-east-1', ENDPOINT '127.0.0.1:${port}', URL_STYLE 'path', USE_SSL false);`;
  s3App = await buildServer({ ...config, beta: { ...config.beta, objectStores: ['s3'], duckdbInitSql: initSql } });
});
afterAll(async () => {
  await app?.close();
  await s3App?.close();
  await new Promise((resolve) => store?.close(resolve));
});

describe('object-store locators (http:// through httpfs)', () => {
  test('forecast exactly what the same file uploaded as a part gives, read from the store by ranges', async () => {
    requests.length = 0;
    const located = await postBeta(app, [queryPart(query(`${base}/sales.parquet`))], 'aets');
    expect(located.statusCode, located.body).toBe(200);
    expect(requests.some((r) => r.startsWith('GET /sales.parquet'))).toBe(true);
    const uploaded = await postBeta(app, [queryPart(query({ uri: 'inline://sales' })), filePart('sales', path.join(dir, 'sales.parquet'))], 'aets');
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    const { data } = BetaResponse.parse(located.json());
    expect(data).toEqual(BetaResponse.parse(uploaded.json()).data);
    expect(data.identifiers.store).toEqual(['a', 'a', 'a', 'b', 'b', 'b']);
  });

  test('an object that does not exist is a 422 naming the locator, not a server error', async () => {
    const res = await postBeta(app, [queryPart(query(`${base}/missing.parquet`))]);
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.query.input.source');
    expect(res.json().detail).toContain(`${base}/missing.parquet`);
  });

  test('s3:// with the credentials and endpoint of BETA_DUCKDB_INIT: the store gets signed ranged reads', async () => {
    fs.mkdirSync(path.join(dir, 'bucket'), { recursive: true });
    fs.copyFileSync(path.join(dir, 'sales.parquet'), path.join(dir, 'bucket', 'sales.parquet'));
    requests.length = 0;
    authorizations.length = 0;
    const located = await postBeta(s3App, [queryPart(query('s3://bucket/sales.parquet'))], 'aets');
    expect(located.statusCode, located.body).toBe(200);
    expect(requests.some((r) => r.startsWith('GET /bucket/sales.parquet'))).toBe(true);
    // DuckDB signed its requests with the configured key (AWS Signature Version 4).
    expect(authorizations.some((a) => a.startsWith('AWS4-HMAC-SHA256 Credential=test-key/'))).toBe(true);
    const uploaded = await postBeta(app, [queryPart(query({ uri: 'inline://sales' })), filePart('sales', path.join(dir, 'sales.parquet'))], 'aets');
    expect(BetaResponse.parse(located.json()).data).toEqual(BetaResponse.parse(uploaded.json()).data);
  });

  test('an s3:// glob lists the bucket and reads every object it matches as one table', async () => {
    fs.mkdirSync(path.join(dir, 'bucket', 'parts'), { recursive: true });
    for (const store of ['c', 'd']) {
      await writeParquet(
        path.join(dir, 'bucket', 'parts', `${store}.parquet`),
        `SELECT DATE '2024-01-01' + d::INTEGER AS ts, '${store}' AS store, d + 1.0 AS sales FROM range(30) r(d)`,
      );
    }
    requests.length = 0;
    const res = await postBeta(s3App, [queryPart(query('s3://bucket/parts/*.parquet'))]);
    expect(res.statusCode, res.body).toBe(200);
    expect(requests.some((r) => r.includes('list-type=2'))).toBe(true);
    const { data } = BetaResponse.parse(res.json());
    expect(data.identifiers.store).toEqual(['c', 'c', 'c', 'd', 'd', 'd']);
  });

  test('schemes the server does not enable are refused before anything is read', async () => {
    requests.length = 0;
    const res = await postBeta(app, [queryPart(query(`s3://bucket/sales.parquet`))]);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/s3:\/\/ locators are not enabled on this server \(enabled: http\)/);
    expect(requests).toEqual([]);
  });
});

test("a BETA_DUCKDB_INIT that DuckDB refuses stops the server at start with DuckDB's reason", async () => {
  const config = testConfig();
  await expect(buildServer({ ...config, beta: { ...config.beta, duckdbInitSql: 'SET no_such_setting = 1;' } })).rejects.toThrow(
    /BETA_DUCKDB_INIT failed in DuckDB: .*no_such_setting/,
  );
  // A typo after a secret: the reason is told, the statement and its secret are not.
  const typo = "CREATE SECRET s (TYPE s3, KEY_ID 'AKIA-KEY', SECRET 'the-secret-value' REGIN 'x');";
  const refused = await buildServer({ ...config, beta: { ...config.beta, duckdbInitSql: typo } }).catch((error: Error) => error);
  expect((refused as Error).message).toMatch(/^BETA_DUCKDB_INIT failed in DuckDB: Parser Error: syntax error at or near "REGIN"$/);
  expect((refused as Error).message).not.toMatch(/the-secret-value|AKIA-KEY/);
});
