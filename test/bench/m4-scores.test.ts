import { describe, expect, it } from 'vitest';
import { mase, maseLag, maseScale, smape } from './m4-scores.ts';

describe('smape (M4, in %)', () => {
  it('matches a hand-computed value', () => {
    // 200/2 * (10/210 + 20/380) = 100 * (1/21 + 1/19) = 4000/399
    expect(smape([100, 200], [110, 180])).toBeCloseTo(4000 / 399, 12);
  });

  it('is symmetric in actual and forecast, bounded by 200', () => {
    expect(smape([110, 180], [100, 200])).toBeCloseTo(4000 / 399, 12);
    expect(smape([1], [-1])).toBe(200);
    expect(smape([3, 4], [0, 0])).toBe(200);
  });

  it('counts a step with actual = forecast = 0 as no error', () => {
    expect(smape([0, 2], [0, 2])).toBe(0);
    // second step: 200/2 * 1/3
    expect(smape([0, 1], [0, 2])).toBeCloseTo(100 / 3, 12);
  });

  it('rejects mismatched or empty input', () => {
    expect(() => smape([], [])).toThrow(RangeError);
    expect(() => smape([1, 2], [1])).toThrow(RangeError);
  });
});

describe('mase (M4)', () => {
  it('scales by the in-sample seasonal naive MAE at lag m', () => {
    // lag-2 differences of [1, 2, 3, 4, 6]: |3-1|, |4-2|, |6-3| = 2, 2, 3 -> scale 7/3
    expect(maseScale([1, 2, 3, 4, 6], 2)).toBeCloseTo(7 / 3, 12);
    // out-of-sample MAE (|5-4| + |7-9|) / 2 = 1.5 -> 1.5 / (7/3) = 9/14
    expect(mase([1, 2, 3, 4, 6], [5, 7], [4, 9], 2)).toBeCloseTo(9 / 14, 12);
  });

  it('uses lag 1 when the history is not longer than m', () => {
    expect(maseLag(3, 4)).toBe(1);
    expect(maseLag(4, 4)).toBe(1);
    expect(maseLag(5, 4)).toBe(4);
    // lag-1 differences of [1, 3, 2]: 2, 1 -> scale 1.5; error |2 - 5| = 3 -> 2
    expect(mase([1, 3, 2], [2], [5], 4)).toBeCloseTo(2, 12);
  });

  it('with m = 1 is the MASE of the naive scaling', () => {
    // lag-1 differences of [10, 12, 11, 15]: 2, 1, 4 -> 7/3; errors 1, 3 -> MAE 2 -> 6/7
    expect(mase([10, 12, 11, 15], [16, 14], [15, 17], 1)).toBeCloseTo(6 / 7, 12);
  });

  it('is null when the scale is zero', () => {
    expect(mase([5, 5, 5], [5, 6], [5, 5], 1)).toBeNull();
  });

  it('rejects mismatched input', () => {
    expect(() => mase([1, 2, 3], [1, 2], [1], 1)).toThrow(RangeError);
    expect(() => maseScale([1], 1)).toThrow(RangeError);
  });
});
