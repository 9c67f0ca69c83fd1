import { describe, expect, test } from 'vitest';
import { naive, seasonalNaive } from '../../models/families/naive/naive.ts';
import { seasonalWindowAverage, seasonalWindowAverageModel } from '../../models/families/naive/seasonal-window-average.ts';
import { normalQuantile } from '../../models/numerics/normal.ts';
import { ModelInputError } from '../../models/contract/model-interface.ts';

test('normalQuantile matches known values', () => {
  expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
  expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 8);
  expect(normalQuantile(0.1)).toBeCloseTo(-1.2815515655446004, 8);
  expect(normalQuantile(1e-6)).toBeCloseTo(-4.753424308822899, 7);
});

test('naive repeats the last value; its spread grows with sqrt(h) (R rwf)', () => {
  const out = naive.forecast({ history: Float64Array.from([1, 3, 2, 4]), horizon: 3, quantiles: [0.9], seasonLength: 1 });
  expect(Array.from(out.mean)).toEqual([4, 4, 4]);
  const sigma = Math.sqrt((4 + 1 + 4) / 3);
  out.quantiles[0].forEach((q, h) => expect(q).toBeCloseTo(4 + normalQuantile(0.9) * sigma * Math.sqrt(h + 1), 10));
});

test('seasonal naive repeats the last season; its spread grows per whole season (R snaive)', () => {
  const y = Float64Array.from([1, 2, 3, 2, 3, 5]);
  const out = seasonalNaive({ history: y, horizon: 4, quantiles: [0.1], seasonLength: 3 }, 3);
  expect(Array.from(out.mean)).toEqual([2, 3, 5, 2]);
  const sigma = Math.sqrt((1 + 1 + 4) / 3);
  const z = normalQuantile(0.1);
  expect(out.quantiles[0][2]).toBeCloseTo(5 + z * sigma, 10);
  expect(out.quantiles[0][3]).toBeCloseTo(2 + z * sigma * Math.SQRT2, 10);
});

test('a history shorter than the season is a model input error', () => {
  expect(() => seasonalNaive({ history: Float64Array.from([1, 2]), horizon: 1, quantiles: [], seasonLength: 3 }, 3)).toThrow(ModelInputError);
});

describe('seasonal-window-average', () => {
  const z = normalQuantile(0.9);

  test("each step is the mean of the last window_size cycles at its place; the spread is that average's own error", () => {
    // Season 3, three cycles held: the last two average to [2.5, 3.5, 5]. Inside the history each
    // value of the second cycle exceeds the one cycle before it by 1, 1, 0, and each of the third
    // the average of the two before it by 1.5, 1.5, 2.
    const y = Float64Array.from([1, 2, 4, 2, 3, 4, 3, 4, 6]);
    const out = seasonalWindowAverage({ history: y, horizon: 4, quantiles: [0.9], seasonLength: 3 }, 2);
    expect(Array.from(out.mean)).toEqual([2.5, 3.5, 5, 2.5]);
    const sigma = Math.sqrt((1 + 1 + 0 + 2.25 + 2.25 + 4) / 6);
    expect(out.quantiles[0][0]).toBeCloseTo(2.5 + z * sigma, 10);
    expect(out.quantiles[0][3]).toBeCloseTo(2.5 + z * sigma * Math.SQRT2, 10);
    // One cycle is seasonal naive.
    expect(Array.from(seasonalWindowAverage({ history: y, horizon: 3, quantiles: [], seasonLength: 3 }, 1).mean)).toEqual([3, 4, 6]);
  });

  test('of several seasons, the longest the history holds; fewer cycles where the history holds fewer', () => {
    const y = Float64Array.from({ length: 20 }, (_, t) => t);
    const task = { history: y, horizon: 2, quantiles: [], seasonLength: 2, seasonLengths: [2, 8, 30] };
    // Period 8, two whole cycles held though four are asked: the means of 4 and 12, of 5 and 13.
    expect(Array.from(seasonalWindowAverage(task, 4).mean)).toEqual([8, 9]);
    expect(() => seasonalWindowAverage({ ...task, history: y.subarray(0, 1) }, 4)).toThrow(ModelInputError);
  });

  test('window_size reaches the model through its options; 4 by default', () => {
    const y = Float64Array.from({ length: 12 }, (_, t) => t * t);
    const task = { history: y, horizon: 1, quantiles: [], seasonLength: 2 };
    expect(seasonalWindowAverageModel.forecast(task).mean[0]).toBe((100 + 64 + 36 + 16) / 4);
    expect(seasonalWindowAverageModel.forecast({ ...task, options: { windowSize: 2 } }).mean[0]).toBe((100 + 64) / 2);
  });
});
