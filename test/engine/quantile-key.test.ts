import { expect, test } from 'vitest';
import { quantileKey } from '../../engine/quantile-key.ts';

test('quantile keys are plain decimal strings that round-trip', () => {
  expect([0.1, 0.5, 0.05, 0.975, 0.9999].map(quantileKey)).toEqual(['0.1', '0.5', '0.05', '0.975', '0.9999']);
  expect(quantileKey(1.5e-7)).toBe('0.00000015');
  expect(quantileKey(1e-7)).toBe('0.0000001');
  for (const q of [1.5e-7, 3.3e-8, 1.234e-9]) expect(Number(quantileKey(q))).toBe(q);
});
