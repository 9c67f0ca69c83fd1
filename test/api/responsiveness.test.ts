import { expect, test } from 'vitest';
import { AUTH, useTestServer } from './helpers.ts';

const server = useTestServer();

/** Long hourly series with a daily cycle: seconds of aarima fitting each. */
function hourlySeries(count: number, length: number) {
  const index = Array.from({ length }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 3_600_000).toISOString().slice(0, 19));
  return Array.from({ length: count }, (_, k) => ({
    target: index.map((_, t) => 100 + k + 20 * Math.sin((2 * Math.PI * t) / 24) + ((t * 7919 + k * 104729) % 13)),
    index,
  }));
}

test('a long model fit runs off the event loop: other requests are answered while it computes', async () => {
  let forecastDone = false;
  const slow = server.app
    .inject({ method: 'POST', url: '/forecast?model=aarima', headers: AUTH, payload: { series: hourlySeries(4, 600), horizon: 24, freq: 'H' } })
    .then((res) => {
      forecastDone = true;
      return res;
    });
  // Let the forecast reach the worker threads before asking for anything else.
  await new Promise((r) => setTimeout(r, 200));
  const spec = await server.app.inject({ method: 'GET', url: '/openapi' });
  // Answered on the event loop (model threads are all busy with the slow forecast).
  const refused = await server.app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: { series: hourlySeries(1, 30), horizon: 0, freq: 'H' } });
  expect(spec.statusCode).toBe(200);
  expect(refused.statusCode).toBe(422);
  expect(forecastDone).toBe(false);
  const res = await slow;
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().series).toHaveLength(4);
});
