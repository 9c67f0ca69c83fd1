import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Engine } from '../../engine/engine.ts';
import { AUTH, hourlySeries, testConfig, testServer } from './helpers.ts';

// One model thread, so that a single long fit fills them all.
const engine = new Engine({ ...testConfig().engine, modelThreads: 1 });
let app: FastifyInstance;
beforeAll(async () => {
  app = await testServer({}, undefined, undefined, engine);
});
afterAll(async () => {
  await app.close();
  await engine.close();
});

test('a small naive forecast does not wait for a model thread: it is answered while a long fit holds the only one', async () => {
  let fitDone = false;
  const slow = app
    .inject({ method: 'POST', url: '/forecast?model=aarima', headers: AUTH, payload: { series: hourlySeries(1, 500), horizon: 24, freq: 'H' } })
    .then((res) => {
      fitDone = true;
      return res;
    });
  // Let the fit reach the thread first.
  await new Promise((r) => setTimeout(r, 200));
  const small = await app.inject({
    method: 'POST',
    url: '/forecast?model=naive',
    headers: AUTH,
    payload: { series: hourlySeries(1, 48), horizon: 24, freq: 'H' },
  });
  expect(small.statusCode, small.body).toBe(200);
  expect(small.json().series[0][0].prediction.mean).toHaveLength(24);
  // Had it gone to the thread, it would have been answered only after the fit.
  expect(fitDone).toBe(false);
  expect((await slow).statusCode).toBe(200);
});
