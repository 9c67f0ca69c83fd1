import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FailureWindows } from '../../api/rate-limit.ts';
import { uploadsDir } from '../../api/beta/upload.ts';
import { loadConfig, type Config } from '../../config.ts';
import { filePart, multipartBody, queryPart, RETAIL, retailQuery, tempDir, writeParquet } from '../beta/helpers.ts';
import { AUTH, dailyRequest, testConfig, testServer } from './helpers.ts';

/**
 * The limits of the synchronous API: failed authentications per client address, and the
 * per-principal quotas that apply before anything runs (series per request, upload bytes), each
 * refusal a problem naming its limit. Job quotas and Idempotency-Key headers: limits-jobs.test.ts.
 */

const BOB = { authorization: 'Bearer test-key-bob' };
const WRONG = { authorization: 'Bearer not-a-key' };

function quotas(defaults: Partial<Config['quotas']['defaults']>, byPrincipal: Config['quotas']['byPrincipal'] = {}): Pick<Config, 'quotas'> {
  return { quotas: { defaults: { ...loadConfig({}).quotas.defaults, ...defaults }, byPrincipal } };
}

const warmup = (app: FastifyInstance, headers: Record<string, string>, remoteAddress = '10.0.0.1') =>
  app.inject({ method: 'GET', url: '/warmup?model=naive', headers, remoteAddress });

describe('failed authentications per client address', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testServer({ authFailures: { limit: 3, windowMs: 60_000 } });
  });
  afterAll(() => app.close());

  test('past the limit every request from the address is 429 with Retry-After, before its key is checked', async () => {
    for (let i = 0; i < 3; i++) expect((await warmup(app, WRONG, '10.0.0.1')).statusCode).toBe(401);
    for (const headers of [WRONG, AUTH, {}]) {
      const res = await warmup(app, headers, '10.0.0.1');
      expect(res.statusCode).toBe(429);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 429, code: 'too_many_failed_authentications', limit: { name: 'failed_authentications', value: 3 } });
      expect(res.json().detail).toMatch(/3 within 60 s/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    // Other addresses are unaffected, and routes that need no key still answer.
    expect((await warmup(app, AUTH, '10.0.0.2')).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/openapi', remoteAddress: '10.0.0.1' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.0.0.1' })).statusCode).toBe(200);
  });

  test('requests without credentials and successful ones do not count', async () => {
    for (let i = 0; i < 5; i++) expect((await warmup(app, {}, '10.0.0.3')).statusCode).toBe(401);
    for (let i = 0; i < 5; i++) expect((await warmup(app, AUTH, '10.0.0.3')).statusCode).toBe(200);
    // A malformed Authorization header is a failed attempt like a wrong key.
    expect((await warmup(app, { authorization: 'Basic abc' }, '10.0.0.3')).statusCode).toBe(401);
    expect((await warmup(app, BOB, '10.0.0.3')).statusCode).toBe(200);
  });

  test('a success does not reset the count: a valid key cannot be used to keep guessing', async () => {
    for (let i = 0; i < 2; i++) expect((await warmup(app, WRONG, '10.0.0.4')).statusCode).toBe(401);
    expect((await warmup(app, AUTH, '10.0.0.4')).statusCode).toBe(200);
    expect((await warmup(app, WRONG, '10.0.0.4')).statusCode).toBe(401);
    expect((await warmup(app, AUTH, '10.0.0.4')).statusCode).toBe(429);
  });

  test('the address may try again once its failures leave the window', async () => {
    const quick = await testServer({ authFailures: { limit: 2, windowMs: 1_000 } });
    try {
      for (let i = 0; i < 2; i++) expect((await warmup(quick, WRONG)).statusCode).toBe(401);
      const blocked = await warmup(quick, AUTH);
      expect(blocked.statusCode).toBe(429);
      expect(blocked.headers['retry-after']).toBe('1');
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await warmup(quick, AUTH)).statusCode).toBe(200);
    } finally {
      await quick.close();
    }
  });

  test("behind a trusted proxy the forwarded address is the client's; otherwise the header is ignored", async () => {
    for (const [trustProxy, separate] of [
      [true, true],
      [false, false],
    ] as const) {
      const server = await testServer({ authFailures: { limit: 1, windowMs: 60_000 }, trustProxy });
      try {
        expect((await warmup(server, { ...WRONG, 'x-forwarded-for': '203.0.113.1' }, '10.9.9.9')).statusCode).toBe(401);
        const other = await warmup(server, { ...AUTH, 'x-forwarded-for': '203.0.113.2' }, '10.9.9.9');
        expect(other.statusCode).toBe(separate ? 200 : 429);
      } finally {
        await server.close();
      }
    }
  });

  test('AUTH_FAILURE_LIMIT=0 turns the limit off', async () => {
    const open = await testServer({ authFailures: { limit: 0, windowMs: 60_000 } });
    try {
      for (let i = 0; i < 20; i++) expect((await warmup(open, WRONG)).statusCode).toBe(401);
      expect((await warmup(open, AUTH)).statusCode).toBe(200);
    } finally {
      await open.close();
    }
  });

  test('the window slides: each failure counts for the window after it', () => {
    let now = 0;
    const windows = new FailureWindows(2, 10_000, () => now);
    windows.record('a');
    now = 4_000;
    windows.record('a');
    expect(windows.blockedFor('a')).toBe(6);
    expect(windows.blockedFor('b')).toBe(0);
    now = 10_001;
    expect(windows.blockedFor('a')).toBe(0);
    windows.record('a');
    expect(windows.blockedFor('a')).toBe(4);
  });
});

describe('series per request', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testServer(quotas({ seriesPerRequest: 2 }, { bob: { seriesPerRequest: 0 } }));
  });
  afterAll(() => app.close());

  const withSeries = (count: number) => {
    const one = dailyRequest().series[0];
    return { ...dailyRequest(), series: Array.from({ length: count }, () => one) };
  };

  test('over the quota is 413 naming the quota, its value and the field; at it the forecast runs', async () => {
    const refused = await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: withSeries(3) });
    expect(refused.statusCode).toBe(413);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.json()).toMatchObject({
      status: 413,
      code: 'quota_exceeded',
      limit: { name: 'series_per_request', value: 2 },
      errors: [{ path: 'body.series', message: 'over the series_per_request quota of 2' }],
    });
    expect(refused.json().detail).toMatch(/3 series; the principal of this API key may send at most 2/);
    expect((await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: withSeries(2) })).statusCode).toBe(200);
  });

  test("a principal's override replaces the default (0: no limit)", async () => {
    expect((await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: BOB, payload: withSeries(5) })).statusCode).toBe(200);
  });
});

describe('upload bytes', () => {
  const dir = tempDir('limits-');
  let app: FastifyInstance;
  let config: Config;
  let sales: string;
  beforeAll(async () => {
    config = testConfig(quotas({ uploadBytes: 1_000 }, { bob: { uploadBytes: 0 } }));
    app = await testServer(config);
    sales = await writeParquet(path.join(dir, 'sales.parquet'), RETAIL);
    expect(fs.statSync(sales).size).toBeGreaterThan(1_000);
  });
  afterAll(() => app.close());

  const bigRequest = () =>
    dailyRequest(
      {},
      {
        target: Array.from({ length: 200 }, (_, i) => i % 7),
        index: Array.from({ length: 200 }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10)),
      },
    );

  test('a JSON body over the quota is 413 from its Content-Length, before it is parsed', async () => {
    const res = await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: bigRequest() });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'quota_exceeded', limit: { name: 'upload_bytes', value: 1_000 }, errors: [{ path: 'body' }] });
    expect(res.json().detail).toMatch(/the request body is \d+ bytes, more than the principal of this API key may send in one request \(1000 bytes\)/);
    expect((await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: BOB, payload: bigRequest() })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: dailyRequest() })).statusCode).toBe(200);
  });

  test('a chunked JSON body (no Content-Length) is counted as it arrives', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const send = (body: string) =>
      new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/forecast?model=naive',
            headers: { ...AUTH, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          },
          (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
          },
        );
        req.on('error', reject);
        // In pieces, so that no length is known before the body ends.
        for (let at = 0; at < body.length; at += 500) req.write(body.slice(at, at + 500));
        req.end();
      });
    const refused = await send(JSON.stringify(bigRequest()));
    expect(refused.status).toBe(413);
    expect(refused.body).toMatchObject({ code: 'quota_exceeded', limit: { name: 'upload_bytes', value: 1_000 } });
    expect((await send(JSON.stringify(dailyRequest()))).status).toBe(200);
  });

  test("a beta upload over the quota is 413 naming it, and leaves no file behind; the server's own limit still applies to the others", async () => {
    const body = multipartBody([queryPart(retailQuery()), filePart('sales', sales)]);
    const post = (headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: '/v1-beta/forecast?model=naive', headers: { ...headers, ...body.headers }, payload: body.payload });
    const refused = await post(AUTH);
    expect(refused.statusCode).toBe(413);
    expect(refused.json()).toMatchObject({ code: 'quota_exceeded', limit: { name: 'upload_bytes', value: 1_000 }, errors: [{ path: 'body' }] });
    expect(fs.readdirSync(uploadsDir(config.dataDir))).toEqual([]);
    expect((await post(BOB)).statusCode).toBe(200);
  });
});

test('quota settings: defaults, QUOTA_OVERRIDES checked at start, and the durations', () => {
  const defaults = loadConfig({});
  expect(defaults.quotas).toEqual({
    defaults: { concurrentJobs: 20, seriesPerRequest: 100_000, forecastsPerJob: 10_000_000, uploadBytes: 0, schedules: 20 },
    byPrincipal: {},
  });
  expect(defaults.idempotencyKeyTtlMs).toBe(24 * 3_600_000);
  expect(defaults.authFailures).toEqual({ limit: 10, windowMs: 60_000 });
  expect(defaults.trustProxy).toBe(false);

  const set = loadConfig({
    QUOTA_CONCURRENT_JOBS: '3',
    QUOTA_SERIES_PER_REQUEST: '0',
    QUOTA_SCHEDULES: '2',
    QUOTA_OVERRIDES: '{"alice": {"concurrent_jobs": 50, "upload_bytes": 0, "schedules": 5}}',
    IDEMPOTENCY_KEY_TTL: '30s',
    AUTH_FAILURE_LIMIT: '5',
    AUTH_FAILURE_WINDOW: '15m',
    TRUST_PROXY: '2',
  });
  expect(set.quotas.defaults).toMatchObject({ concurrentJobs: 3, seriesPerRequest: 0, schedules: 2 });
  expect(set.quotas.byPrincipal).toEqual({ alice: { concurrentJobs: 50, uploadBytes: 0, schedules: 5 } });
  expect(set.idempotencyKeyTtlMs).toBe(30_000);
  expect(set.authFailures).toEqual({ limit: 5, windowMs: 15 * 60_000 });
  expect(set.trustProxy).toBe(2);
  expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
  expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toBe('10.0.0.0/8, 127.0.0.1');

  const refused: [Record<string, string>, RegExp][] = [
    [{ QUOTA_OVERRIDES: '{alice' }, /QUOTA_OVERRIDES must be JSON/],
    [{ QUOTA_OVERRIDES: '[1]' }, /QUOTA_OVERRIDES must be an object/],
    [{ QUOTA_OVERRIDES: '{"alice": 3}' }, /QUOTA_OVERRIDES\.alice must be an object/],
    [{ QUOTA_OVERRIDES: '{"alice": {"jobs": 3}}' }, /QUOTA_OVERRIDES\.alice\.jobs is not a quota; the quotas are concurrent_jobs, series_per_request/],
    [{ QUOTA_OVERRIDES: '{"alice": {"concurrent_jobs": -1}}' }, /QUOTA_OVERRIDES\.alice\.concurrent_jobs must be a whole number >= 0/],
    [{ QUOTA_OVERRIDES: '{"alice": {"concurrent_jobs": 1.5}}' }, /QUOTA_OVERRIDES\.alice\.concurrent_jobs/],
    [{ QUOTA_CONCURRENT_JOBS: '2.5' }, /QUOTA_CONCURRENT_JOBS must be a whole number/],
    [{ QUOTA_UPLOAD_BYTES: '-1' }, /QUOTA_UPLOAD_BYTES/],
    [{ IDEMPOTENCY_KEY_TTL: '24' }, /IDEMPOTENCY_KEY_TTL must be a whole number of seconds, minutes, hours or days/],
    [{ IDEMPOTENCY_KEY_TTL: '0h' }, /IDEMPOTENCY_KEY_TTL/],
    [{ AUTH_FAILURE_WINDOW: '1w' }, /AUTH_FAILURE_WINDOW/],
  ];
  for (const [env, message] of refused) expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
});
