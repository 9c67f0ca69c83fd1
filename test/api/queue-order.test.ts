import { expect, test } from 'vitest';
import { AUTH, hourlySeries, testConfig, useTestServer } from './helpers.ts';

// One model thread, so the order in which queued batches start decides who waits.
const server = useTestServer({ engine: { ...testConfig().engine, modelThreads: 1 } });

test('a one-series request sent while a large one fills the model thread is answered before it', async () => {
  const started = performance.now();
  let largeDone = 0;
  const large = server.app
    .inject({ method: 'POST', url: '/forecast?model=aets', headers: AUTH, payload: { series: hourlySeries(40, 400), horizon: 24, freq: 'H' } })
    .then((res) => {
      largeDone = performance.now() - started;
      return res;
    });
  // The large request's batches are queued behind its first; then the small one arrives.
  await new Promise((r) => setTimeout(r, 100));
  const small = await server.app.inject({
    method: 'POST',
    url: '/forecast?model=aets',
    headers: AUTH,
    payload: { series: hourlySeries(1, 400), horizon: 24, freq: 'H' },
  });
  const smallDone = performance.now() - started;
  expect(small.statusCode, small.body).toBe(200);
  expect(largeDone).toBe(0); // still computing: the small request did not wait for all of it
  const res = await large;
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().series).toHaveLength(40);
  // It waited for the batch already running (a quarter of the large request), not for the rest.
  expect(smallDone).toBeLessThan(0.6 * largeDone);
});
