import { expect, test } from 'vitest';
import { AUTH, hourlySeries, useTestServer } from './helpers.ts';

const server = useTestServer();

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
  const refused = await server.app.inject({
    method: 'POST',
    url: '/forecast?model=naive',
    headers: AUTH,
    payload: { series: hourlySeries(1, 30), horizon: 0, freq: 'H' },
  });
  expect(spec.statusCode).toBe(200);
  expect(refused.statusCode).toBe(422);
  expect(forecastDone).toBe(false);
  const res = await slow;
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().series).toHaveLength(4);
});
