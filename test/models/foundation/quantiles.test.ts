import { describe, expect, it } from 'vitest';
import { interpolate, mapQuantileSteps, mapQuantiles, probabilityMass, weightedQuantiles } from '../../../models/families/foundation/quantiles.ts';

describe('interpolate (chronos.utils.interpolate_quantiles on one row)', () => {
  const levels = [0.1, 0.5, 0.9];
  const values = [1, 5, 13];
  it('takes a level value exactly, interpolates between levels, holds the ends flat', () => {
    expect(Array.from(interpolate(levels, values, [0.1, 0.5, 0.9]))).toEqual([1, 5, 13]);
    expect(Array.from(interpolate(levels, values, [0.3, 0.7]))).toEqual([3, 9]);
    expect(Array.from(interpolate(levels, values, [0.01, 0.05, 0.95, 0.999]))).toEqual([1, 1, 13, 13]);
  });
});

describe('mapQuantiles: model levels to requested levels by monotone interpolation', () => {
  it('equals plain interpolation when the model quantiles do not cross', () => {
    expect(Array.from(mapQuantiles([0.1, 0.5, 0.9], [1, 5, 13], [0.25, 0.5, 0.8]))).toEqual([2.5, 5, 11]);
  });
  it('orders crossing model quantiles first, so requested quantiles never decrease with their level', () => {
    const out = mapQuantiles([0.1, 0.5, 0.9], [6, 5, 13], [0.1, 0.3, 0.5, 0.9]);
    expect(Array.from(out)).toEqual([5, 5.5, 6, 13]);
    for (let i = 1; i < out.length; i++) expect(out[i]).toBeGreaterThanOrEqual(out[i - 1]);
  });
});

describe('mapQuantileSteps: the monotone mapping for every step of a forecast', () => {
  it('gives, bit for bit, each step sorted and interpolated (its brackets are found once, not per value)', () => {
    const levels = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];
    // Requested levels below, at, between and above the model's levels.
    const query = [0.01, 0.1, 0.15, 0.25, 0.5, 0.55, 0.8, 0.875, 0.9, 0.95, 0.999];
    const horizon = 40;
    let state = 7;
    const next = () => ((state = (state * 48271) % 2147483647) / 2147483647) * 200 - 100;
    // Some steps cross (a random network's head), some are flat (ties), one holds a NaN.
    const channels = levels.map((_, k) => Float64Array.from({ length: horizon }, (_, t) => (t % 5 === 0 ? next() : t % 7 === 0 ? 3 : k * 10 + next() / 20)));
    channels[4][11] = NaN;
    const mapped = mapQuantileSteps(levels, (k) => channels[k], query, horizon);
    for (let t = 0; t < horizon; t++) {
      // The step's values in increasing order (NaN last, as a typed array sorts), interpolated.
      const sorted = Float64Array.from(levels, (_, k) => channels[k][t]).sort();
      const expected = interpolate(levels, sorted, query);
      query.forEach((_, i) => expect(Object.is(mapped[i][t], expected[i]) || mapped[i][t] === expected[i]).toBe(true));
    }
  });
});

describe('probabilityMass and weightedQuantiles (the Chronos-2 long-horizon merge)', () => {
  it('gives each level the trapezoidal mass of its neighbourhood', () => {
    const mass = probabilityMass([0.1, 0.5, 0.9]);
    // (0.5 - 0) / 2, (0.9 - 0.1) / 2, (1 - 0.5) / 2, normalised by their sum 0.9.
    expect(Array.from(mass).map((m) => +m.toFixed(12))).toEqual([0.25 / 0.9, 0.4 / 0.9, 0.25 / 0.9].map((m) => +m.toFixed(12)));
  });
  it('reads quantiles off the weighted empirical distribution of the samples', () => {
    const out = new Float64Array(3);
    // Sorted samples 1, 2, 3, 4 with equal weights: cumulative levels 0.25, 0.5, 0.75, 1.
    weightedQuantiles([0.25, 0.6, 0.9], Float64Array.of(1, 1, 1, 1), Float64Array.of(3, 1, 4, 2), out);
    expect(out[0]).toBeCloseTo(1, 12);
    expect(out[1]).toBeCloseTo(2.4, 12);
    expect(out[2]).toBeCloseTo(3.6, 12);
  });
});
