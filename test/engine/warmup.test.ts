import { afterAll, expect, test } from 'vitest';
import { loadConfig } from '../../config.ts';
import { Engine } from '../../engine/engine.ts';
import { warmUpModel } from '../../engine/warmup.ts';

const engine = new Engine({ ...loadConfig({}).engine, modelThreads: 2 });
afterAll(() => engine.close());

test('warming the ensemble loads its copy on the event loop, where requests combine its members', async () => {
  expect(engine.threads.holdsHere('ensemble')).toBe(false);
  const warmed = await warmUpModel(engine, 'ensemble');
  expect(warmed).toMatchObject({ model: 'ensemble', executionProvider: null });
  expect(engine.threads.holdsHere('ensemble')).toBe(true);
}, 60_000);

test('a model run whole on the threads is not loaded on the event loop', async () => {
  await warmUpModel(engine, 'theta');
  expect(engine.threads.holdsHere('theta')).toBe(false);
});
