import { expect, test } from 'vitest';
import { naive, seasonalNaive } from '../../models/families/naive/naive.ts';
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
