import { afterAll, expect, test } from 'vitest';
import { loadConfig } from '../../config.ts';
import { ModelThreads } from '../../engine/threads/pool.ts';

const threads = new ModelThreads(2, loadConfig({}).engine.models);
afterAll(() => threads.close());
const runLocalTasks = (model: string, tasks: Parameters<ModelThreads['runLocal']>[1]) => threads.runLocal(model, tasks);

test('runs local model tasks in worker threads and keeps their order', async () => {
  const tasks = Array.from({ length: 10 }, (_, i) => ({ history: Float64Array.from([i, i + 1, i + 2]), horizon: 2, quantiles: [0.5], seasonLength: 1 }));
  const results = await runLocalTasks('naive', tasks);
  expect(results.map((r) => (r.ok ? Array.from(r.mean) : null))).toEqual(tasks.map((_, i) => [i + 2, i + 2]));
});

test('reports a model input error without failing the batch', async () => {
  const results = await runLocalTasks('naive', [
    { history: Float64Array.from([1]), horizon: 1, quantiles: [], seasonLength: 3 },
    { history: Float64Array.from([1, 2]), horizon: 1, quantiles: [], seasonLength: 1 },
  ]);
  expect(results[0]).toMatchObject({ ok: false, inputError: true });
  expect(results[1]).toMatchObject({ ok: true });
});
