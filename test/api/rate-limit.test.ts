import { expect, test } from 'vitest';
import { TokenBuckets } from '../../api/rate-limit.ts';
import { AUTH, testServer } from './helpers.ts';

test('a token bucket allows a burst, then refills at its rate', () => {
  let now = 0;
  const buckets = new TokenBuckets(2, 3, () => now);
  expect([buckets.take('a'), buckets.take('a'), buckets.take('a')]).toEqual([0, 0, 0]);
  expect(buckets.take('a')).toBe(1);
  expect(buckets.take('b')).toBe(0);
  now = 500;
  expect(buckets.take('a')).toBe(0);
  expect(buckets.take('a')).toBe(1);
});

test('past the limit a principal gets 429 rate_limited with an integer Retry-After', async () => {
  const app = await testServer({ rateLimit: { perSecond: 0.1, burst: 2 } });
  const call = (key = 'test-key-alice') => app.inject({ method: 'GET', url: '/warmup?model=naive', headers: { authorization: `Bearer ${key}` } });
  expect((await call()).statusCode).toBe(200);
  expect((await call()).statusCode).toBe(200);
  const limited = await call();
  expect(limited.statusCode).toBe(429);
  expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(limited.json()).toMatchObject({ status: 429, code: 'rate_limited' });
  expect(limited.headers['retry-after']).toMatch(/^\d+$/);
  expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  // Limits are per principal: bob is unaffected.
  expect((await call('test-key-bob')).statusCode).toBe(200);
  // Unauthenticated calls are refused before they spend anyone's tokens.
  expect((await app.inject({ method: 'GET', url: '/warmup?model=naive' })).statusCode).toBe(401);
  expect(AUTH.authorization).toContain('alice');
  await app.close();
});
