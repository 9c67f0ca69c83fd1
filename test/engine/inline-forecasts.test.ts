import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../config.ts';
import { INLINE_WORK_LIMIT, runInline, runsInline, taskWork } from '../../engine/threads/inline.ts';
import { ModelThreads } from '../../engine/threads/pool.ts';
import type { ForecastTask } from '../../models/contract/model-interface.ts';

const threads = new ModelThreads(2, loadConfig({}).engine.models);
afterAll(() => threads.close());

const task = (length: number, extra: Partial<ForecastTask> = {}): ForecastTask => ({
  history: Float64Array.from({ length }, (_, i) => 10 + ((i * 7) % 5) + i / 10),
  horizon: 12,
  quantiles: [0.1, 0.5, 0.9],
  seasonLength: 1,
  ...extra,
});

describe('which batches the event loop runs itself', () => {
  test('a small naive or seasonal-naive batch of an interactive request', () => {
    expect(runsInline('naive', [task(48)], 'interactive')).toBe(true);
    expect(runsInline('seasonal-naive', [task(48), task(96)], 'interactive')).toBe(true);
  });

  test('never a model that fits, however small the series', () => {
    for (const model of ['aets', 'theta', 'aarima', 'ces', 'mstl']) expect(runsInline(model, [task(10)], 'interactive')).toBe(false);
  });

  test("never a job's chunk: background work stays on the threads, behind interactive requests", () => {
    expect(runsInline('naive', [task(48)], 'background')).toBe(false);
  });

  test('not past the work limit, conformal windows counted as fits', () => {
    const one = taskWork(task(48));
    expect(one).toBe(48 + 12 * 4);
    expect(
      runsInline(
        'naive',
        Array.from({ length: Math.floor(INLINE_WORK_LIMIT / one) }, () => task(48)),
        'interactive',
      ),
    ).toBe(true);
    expect(
      runsInline(
        'naive',
        Array.from({ length: Math.floor(INLINE_WORK_LIMIT / one) + 1 }, () => task(48)),
        'interactive',
      ),
    ).toBe(false);
    expect(runsInline('naive', [task(INLINE_WORK_LIMIT)], 'interactive')).toBe(false);
    expect(taskWork(task(48, { conformal: { windows: 5 } }))).toBe(one * 6);
  });
});

test('a batch run inline gives exactly what the model threads give', async () => {
  const tasks = [
    task(48),
    task(200, { seasonLength: 24 }),
    task(60, { conformal: { windows: 3 } }),
    // Refused by the model (too short for its season): the same failure either way.
    task(5, { seasonLength: 24 }),
  ];
  for (const model of ['naive', 'seasonal-naive']) {
    const withoutSeconds = (results: Awaited<ReturnType<typeof runInline>>) => results.map(({ seconds: _, ...rest }) => rest);
    const inline = await runInline(model, tasks);
    expect(inline[3]).toMatchObject({ ok: false, inputError: true });
    expect(withoutSeconds(inline)).toEqual(withoutSeconds(await threads.runLocal(model, tasks)));
  }
});
