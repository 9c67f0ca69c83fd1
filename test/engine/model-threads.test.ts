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

test('a cancelled view drops its batches and stops the thread running one; the threads then serve others at once', async () => {
  // aarima on a long hourly series: seconds per fit, far longer than the test waits.
  const history = Float64Array.from({ length: 900 }, (_, t) => 100 + 20 * Math.sin((2 * Math.PI * t) / 24) + ((t * 7919) % 13));
  const slow = Array.from({ length: 4 }, () => ({ history, horizon: 24, quantiles: [0.5], seasonLength: 24 }));
  const cancel = new AbortController();
  const cancelled = threads.withSignal(cancel.signal).runLocal('aarima', slow, 'background');
  await new Promise((resolve) => setTimeout(resolve, 300));
  cancel.abort();
  await expect(cancelled).rejects.toThrow(/abort/i);
  const started = performance.now();
  const after = await threads.runLocal('naive', [{ history: Float64Array.from([1, 2, 3]), horizon: 1, quantiles: [], seasonLength: 1 }]);
  expect(after[0]).toMatchObject({ ok: true });
  // A replaced thread starts in about a second (tsx bootstrap); the aarima fits would take far longer.
  expect(performance.now() - started).toBeLessThan(5_000);
  // A signal already aborted runs nothing.
  await expect(threads.withSignal(AbortSignal.abort()).runLocal('naive', slow)).rejects.toThrow(/abort/i);
}, 30_000);

/**
 * 40 short monthly series of different lengths and periods (their pool calibrates), one too short
 * for most members, and one long enough for a profile of its own: the short profile with every
 * member, pooled weights and quantiles, beside another group.
 */
function shortMonthly(): Parameters<ModelThreads['runCombining']>[1] {
  const month = (k: number) => Date.UTC(2000 + Math.floor(k / 12), k % 12, 1);
  const series = Array.from({ length: 40 }, (_, s) => {
    const length = 36 + (s % 5) * 6;
    const start = s * 3;
    return Float64Array.from({ length }, (_, t) => 200 + s + (s % 3) * t + 15 * Math.sin((2 * Math.PI * (t + start)) / 12) + ((t * 7919 + s * 104729) % 17));
  });
  series.push(
    Float64Array.from([5, 7, 6, 8]),
    Float64Array.from({ length: 200 }, (_, t) => 50 + 0.2 * t + 8 * Math.sin((2 * Math.PI * t) / 12) + ((t * 31) % 7)),
  );
  return series.map((history, s) => ({
    history,
    horizon: 6,
    quantiles: [0.1, 0.5, 0.9],
    seasonLength: 12,
    seriesIndex: s,
    times: Float64Array.from({ length: history.length + 6 }, (_, t) => month(s * 3 + t)),
  }));
}

test("an ensemble's members fit on the threads, and it forecasts exactly as its whole batch on one thread", async () => {
  const tasks = shortMonthly();
  const strip = (results: Awaited<ReturnType<ModelThreads['runGlobal']>>) => results.map((r) => (r.ok ? { mean: r.mean, quantiles: r.quantiles } : r.message));
  const spread = await threads.runCombining('ensemble', tasks, []);
  const oneThread = await threads.runGlobal('ensemble', tasks, [], {}, true);
  expect(spread.every((r) => r.ok)).toBe(true);
  expect(strip(spread)).toEqual(strip(oneThread));
}, 120_000);

test('a cancelled ensemble stops as a cancelled batch does', async () => {
  await expect(threads.withSignal(AbortSignal.abort()).runCombining('ensemble', shortMonthly(), [])).rejects.toThrow(/abort/i);
});

test('an ensemble whose threads stop under it rejects, as one batch on a thread does, and is not read as the model failing', async () => {
  const own = new ModelThreads(2, loadConfig({}).engine.models);
  const outcome = own.runCombining('ensemble', shortMonthly(), []).then(
    () => 'resolved',
    (error: Error) => error,
  );
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await own.close();
  expect(await outcome).toBeInstanceOf(Error);
}, 60_000);
