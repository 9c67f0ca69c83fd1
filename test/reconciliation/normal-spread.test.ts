import { expect, test } from 'vitest';
import { quantilesFromSd, sdFromQuantiles } from '../../engine/reconciliation/normal-spread.ts';
import { ReconciliationError } from '../../engine/reconciliation/reconciliation-error.ts';

/** A base forecast's spread, read back from its quantiles as hierarchicalforecast reads it from its intervals. */

test('the standard deviation behind normal quantiles is read back from every symmetric pair', () => {
  const mean = Float64Array.of(10, 20, 30);
  const sd = Float64Array.of(1, 2.5, 0);
  const levels = [0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95];
  const back = sdFromQuantiles(levels, quantilesFromSd(mean, sd, levels));
  back.forEach((v, t) => expect(v).toBeCloseTo(sd[t], 12));
});

test('levels without a symmetric pair say so', () => {
  const attempt = () => sdFromQuantiles([0.1, 0.5, 0.8], [Float64Array.of(1), Float64Array.of(2), Float64Array.of(3)]);
  expect(attempt).toThrow(ReconciliationError);
  expect(attempt).toThrow(/hold no symmetric pair/);
});

test('crossed quantiles give no negative spread', () => {
  expect([...sdFromQuantiles([0.1, 0.9], [Float64Array.of(5), Float64Array.of(4)])]).toEqual([0]);
});
