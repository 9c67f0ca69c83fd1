import { describe, expect, test } from 'vitest';
import { createEnsemble, SHORT_SERIES_PROFILE, windowsToRun } from '../../models/families/ensemble/ensemble.ts';
import { MIN_POOLED_SERIES } from '../../models/families/ensemble/pooled-calibration.ts';
import { pooledMemberErrors } from '../../models/families/ensemble/pooled-weights.ts';
import { ensembleConfig } from '../../models/families/ensemble/ensemble-config.ts';
import { loadMember } from '../../models/contract/model-registry.ts';
import type { EnsembleSettings, ForecastTask } from '../../models/contract/model-interface.ts';

const settings = { modelsDir: '/nonexistent', onnxThreads: 1 };
const ensemble = createEnsemble((name) => loadMember(name, settings));
const YEAR_MS = 365 * 86_400_000;
const HORIZON = 4;
const N = 24;

/** Series i: a straight line of slope 1 + i / 10, yearly, its history ending `endShift` years before 2020. */
function line(i: number, endShift: number): ForecastTask {
  const slope = 1 + i / 10;
  return {
    history: Float64Array.from({ length: N }, (_, t) => 5 + slope * t),
    horizon: HORIZON,
    quantiles: [0.1, 0.5, 0.9],
    seasonLength: 1,
    seriesIndex: i,
    times: Float64Array.from({ length: N + HORIZON }, (_, k) => Date.UTC(2020, 0, 1) - (N - 1 - k + endShift) * YEAR_MS),
  };
}
const options = (combination: EnsembleSettings['combination'], intervals: EnsembleSettings['intervals'] = 'members') => ({
  options: { members: ['naive', 'seasonal-window-average'], combination, windows: 5, intervals },
});

// On a line of slope s, naive forecasts the last value (its error at step j is s (j + 1)) and a
// window average of the last 4 values forecasts 1.5 s below it (error s (j + 1) + 1.5 s). Both
// windows' recent naive scale is s, so their scaled errors average 2.5 and 4 over 4 steps.
const NAIVE_ERROR = 2.5;
const AVERAGE_ERROR = 4;
const AVERAGE_WEIGHT = 1 / AVERAGE_ERROR ** 2 / (1 / NAIVE_ERROR ** 2 + 1 / AVERAGE_ERROR ** 2);

describe("ensemble's weights pooled across series", () => {
  test('the short profile weighs its members by their pool, and runs only the earliest and the last window', () => {
    expect(SHORT_SERIES_PROFILE.combination).toBe('pooled');
    expect(windowsToRun({ combination: 'pooled', intervals: 'members' })).toBe('earliest-and-last');
    expect(windowsToRun({ combination: 'pooled', intervals: 'pooled' })).toBe('earliest-and-last');
    expect(windowsToRun({ combination: 'pooled', intervals: 'conformal' })).toBe('all');
  });

  test("each member's error over the pool's last windows, scaled by each window's recent naive scale", () => {
    const tasks = Array.from({ length: MIN_POOLED_SERIES }, (_, i) => line(i, i % 12));
    const cut = N - HORIZON;
    const errors = pooledMemberErrors(tasks, (i) => {
      const { history } = tasks[i];
      const slope = history[1] - history[0];
      const last = history[cut - 1];
      // A member that gave no forecast of series 0 is averaged over the others.
      return { cut, byMember: [new Float64Array(HORIZON).fill(last), i === 0 ? null : new Float64Array(HORIZON).fill(last - 1.5 * slope)] };
    });
    tasks.forEach((_, i) => {
      expect(errors(i)![0]).toBeCloseTo(NAIVE_ERROR, 12);
      // 29 forecasts, under MIN_POOLED_SERIES: no error of its own.
      expect(errors(i)![1]).toBeNaN();
    });
  });

  test('many series of different periods: the mean leans on the member that did better in their last windows', async () => {
    const tasks = Array.from({ length: MIN_POOLED_SERIES + 10 }, (_, i) => line(i, i % 12));
    const pooled = await ensemble.forecastBatch(tasks, [], options('pooled'));
    const equal = await ensemble.forecastBatch(tasks, [], options('mean'));
    tasks.forEach((task, i) => {
      const slope = 1 + i / 10;
      const last = task.history[N - 1];
      for (let j = 0; j < HORIZON; j++) {
        expect(pooled[i].mean[j]).toBeCloseTo(last - 1.5 * slope * AVERAGE_WEIGHT, 9);
        expect(equal[i].mean[j]).toBeCloseTo(last - 0.75 * slope, 9);
      }
    });
  });

  test('too few series, one series alone, or series of one period get equal weights, as `mean` does', async () => {
    const answer = async (tasks: ForecastTask[], combination: EnsembleSettings['combination']) => ensemble.forecastBatch(tasks, [], options(combination));
    const few = Array.from({ length: MIN_POOLED_SERIES - 1 }, (_, i) => line(i, i % 12));
    expect(await answer(few, 'pooled')).toEqual(await answer(few, 'mean'));
    expect(await answer([line(3, 0)], 'pooled')).toEqual(await answer([line(3, 0)], 'mean'));
    const onePeriod = Array.from({ length: MIN_POOLED_SERIES + 10 }, (_, i) => line(i, i % 3 === 0 ? i % 12 : 0));
    expect(await answer(onePeriod, 'pooled')).toEqual(await answer(onePeriod, 'mean'));
  });

  test('pooled quantiles are calibrated on last windows combined with the pooled weights', async () => {
    // The combined last window sits 1.5 s x AVERAGE_WEIGHT below the line's last value, so the
    // scaled error at step j is j + 1 + 1.5 x AVERAGE_WEIGHT: the 80% bound's offset from the mean.
    const tasks = Array.from({ length: MIN_POOLED_SERIES + 10 }, (_, i) => line(i, i % 12));
    const outputs = await ensemble.forecastBatch(tasks, [], options('pooled', 'pooled'));
    tasks.forEach((_, i) => {
      const slope = 1 + i / 10;
      for (let j = 0; j < HORIZON; j++) expect(outputs[i].quantiles[2][j] - outputs[i].mean[j]).toBeCloseTo(slope * (j + 1 + 1.5 * AVERAGE_WEIGHT), 9);
    });
  });

  test('`pooled` is a combination a request may name; an unknown one is refused with its path', () => {
    expect(ensembleConfig.schema.safeParse({ combination: 'pooled' }).success).toBe(true);
    const refused = ensembleConfig.schema.safeParse({ combination: 'pooled-ish' });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0].path).toEqual(['combination']);
  });
});
