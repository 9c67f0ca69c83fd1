import { expect, test } from 'vitest';
import { computeMetrics, crps, mape, pinball } from '../../engine/accuracy-metrics.ts';

test('metrics match hand-computed values', () => {
  // actual 10, 20; mean 12, 17 -> errors +2, -3.
  const m = computeMetrics([10, 20], [12, 17], [0.5], [[12, 17]]);
  expect(m.mae).toBeCloseTo(2.5, 12);
  expect(m.mape).toBeCloseTo((0.2 + 0.15) / 2, 12);
  expect(m.wape).toBeCloseTo(5 / 30, 12);
  expect(m.scaled_bias).toBeCloseTo(-1 / 30, 12);
  // Median-only CRPS is 2 * pinball at 0.5 = the absolute error.
  expect(m.crps).toBeCloseTo(2.5, 12);
});

test('CRPS from several quantiles averages twice the pinball loss', () => {
  const levels = [0.1, 0.9];
  const value = crps([5], levels, [[4], [8]]);
  expect(value).toBeCloseTo((2 * (pinball(5, 4, 0.1) + pinball(5, 8, 0.9))) / 2, 12);
  expect(pinball(5, 4, 0.1)).toBeCloseTo(0.1, 12);
  expect(pinball(5, 8, 0.9)).toBeCloseTo(0.3, 12);
});

test('undefined metrics are null, never NaN or Infinity', () => {
  expect(mape([0, 1], [1, 1])).toBeNull();
  const zeros = computeMetrics([0, 0], [1, 1], [], []);
  expect(zeros).toEqual({ mae: 1, mape: null, crps: null, wape: null, scaled_bias: null });
  expect(JSON.stringify(zeros)).not.toMatch(/NaN|Infinity/);
});
