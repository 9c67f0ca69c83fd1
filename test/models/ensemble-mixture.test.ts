import { describe, expect, test } from 'vitest';
import { createEnsemble } from '../../models/families/ensemble/ensemble.ts';
import { memberQuantiles } from '../../models/families/ensemble/combine.ts';
import { memberLevels, mixesMembers, mixtureQuantiles } from '../../models/families/ensemble/member-mixture.ts';
import { loadMember } from '../../models/contract/model-registry.ts';
import type { ForecastTask, LocalModel } from '../../models/contract/model-interface.ts';

const GRID = Array.from({ length: 19 }, (_, i) => (i + 1) / 20);
/** A member whose distribution at every step is uniform on [from, from + width]: its quantiles are linear in the level. */
const uniform = (from: number[], width: number, levels: readonly number[]) => ({
  mean: Float64Array.from(from, (a) => a + width / 2),
  quantiles: levels.map((l) => Float64Array.from(from, (a) => a + l * width)),
});

describe('the members as a mixture', () => {
  test('two uniform members side by side mix into one uniform twice as wide (worked by hand)', () => {
    // U[0, 10] and U[10, 20], equal weights: U[0, 20], whose quantile at p is 20 p. The grid's
    // outer quantiles continued along their slope reach 0 and 10 exactly.
    const a = uniform([0, 100], 10, GRID);
    const b = uniform([10, 110], 10, GRID);
    const asked = [0.9, 0.1, 0.5, 0.02, 0.97];
    const mean = Float64Array.of(10, 110);
    const out = mixtureQuantiles(mean, [a, b], [0.5, 0.5], GRID, asked);
    asked.forEach((p, q) => {
      expect(out[q][0]).toBeCloseTo(20 * p, 12);
      expect(out[q][1]).toBeCloseTo(100 + 20 * p, 12);
    });
    // The mean of their offsets keeps one member's width: 1 to 9 against the mixture's 2 to 18.
    const offsets = memberQuantiles(mean, [a, b], [0.5, 0.5]);
    expect(offsets[1][0] - offsets[17][0]).toBeCloseTo(-8, 12);
    expect(out[0][0] - out[1][0]).toBeCloseTo(16, 12);
  });

  test("one member, or members alike, give back the members' quantiles; weights count; the centre moves onto the combined mean", () => {
    const a = uniform([0], 10, GRID);
    const same = mixtureQuantiles(Float64Array.of(5), [a, a], [0.3, 0.7], GRID, GRID);
    GRID.forEach((l, q) => expect(same[q][0]).toBeCloseTo(10 * l, 12));
    // U[0, 10] weighted 3/4 and U[10, 20] 1/4: below 10 the mixture's CDF is 3/4 x / 10.
    const b = uniform([10], 10, GRID);
    const [q60, q80] = mixtureQuantiles(Float64Array.of(7.5), [a, b], [0.75, 0.25], GRID, [0.6, 0.8]);
    expect(q60[0]).toBeCloseTo(8, 12);
    expect(q80[0]).toBeCloseTo(12, 12);
    // The combined mean 1 above the members' weighted mean (7.5) moves every quantile up by 1.
    const [moved] = mixtureQuantiles(Float64Array.of(8.5), [a, b], [0.75, 0.25], GRID, [0.6]);
    expect(moved[0]).toBeCloseTo(9, 12);
  });

  test('members with no spread are steps: each quantile is the first value where the mixture reaches its level', () => {
    const point = (v: number) => ({ mean: Float64Array.of(v), quantiles: GRID.map(() => Float64Array.of(v)) });
    const [q10, q50, q60, q90] = mixtureQuantiles(Float64Array.of(4), [point(3), point(5)], [0.5, 0.5], GRID, [0.1, 0.5, 0.6, 0.9]);
    expect([q10[0], q50[0], q60[0], q90[0]]).toEqual([3, 3, 5, 5]);
    // A point at 10 beside U[0, 10]: the uniform alone reaches 0.4 at 8; the rest waits at 10.
    const [q40, q45] = mixtureQuantiles(Float64Array.of(7.5), [uniform([0], 10, GRID), point(10)], [0.5, 0.5], GRID, [0.4, 0.45]);
    expect(q40[0]).toBeCloseTo(8, 12);
    expect(q45[0]).toBeCloseTo(9, 12);
  });

  test('crossing quantiles are made monotone; levels stay ordered', () => {
    const point = { mean: Float64Array.of(3), quantiles: GRID.map(() => Float64Array.of(3)) };
    const crossing = { mean: Float64Array.of(5), quantiles: GRID.map((l, i) => Float64Array.of(i === 9 ? 0 : 10 * l)) };
    const out = mixtureQuantiles(Float64Array.of(4), [point, crossing], [0.5, 0.5], GRID, GRID);
    for (let q = 1; q < GRID.length; q++) expect(out[q][0]).toBeGreaterThanOrEqual(out[q - 1][0]);
    out.forEach((v) => expect(Number.isFinite(v[0])).toBe(true));
  });

  test('only a series without a season mixes; it asks its members for the grid besides its own levels', () => {
    expect(mixesMembers({ seasonLength: 1 })).toBe(true);
    expect(mixesMembers({ seasonLength: 12 })).toBe(false);
    expect(memberLevels({ seasonLength: 4, quantiles: [0.9, 0.1] })).toEqual([0.9, 0.1]);
    const levels = memberLevels({ seasonLength: 1, quantiles: [0.9, 0.33, 0.1] });
    expect(levels).toEqual([...GRID.slice(0, 6), 0.33, ...GRID.slice(6)]);
  });

  test("through the ensemble: a yearly series' `members` quantiles are its members' mixture, at the levels asked, in their order", async () => {
    const settings = { modelsDir: '/nonexistent', onnxThreads: 1 };
    const ensemble = createEnsemble((name) => loadMember(name, settings));
    const history = Float64Array.from({ length: 30 }, (_, t) => 100 + 3 * t + 4 * Math.sin(t * 1.7));
    const asked = [0.9, 0.1, 0.5];
    const task: ForecastTask = { history, horizon: 6, quantiles: asked, seasonLength: 1 };
    const [out] = await ensemble.forecastBatch([task], [], { options: { members: ['naive', 'theta'], combination: 'mean', windows: 5, intervals: 'members' } });
    const own = async (name: string) => ((await loadMember(name, settings)) as LocalModel).forecast({ ...task, quantiles: memberLevels(task) });
    const members = [await own('naive'), await own('theta')];
    const expected = mixtureQuantiles(out.mean, members, [0.5, 0.5], memberLevels(task), asked);
    asked.forEach((_, q) => out.quantiles[q].forEach((v, j) => expect(v).toBeCloseTo(expected[q][j], 9)));
    // naive stays flat while theta follows the trend: the mixture is wider than the offsets' mean.
    const offsets = memberQuantiles(
      out.mean,
      members.map((m) => ({ mean: m.mean, quantiles: [m.quantiles[1], m.quantiles[17]] })),
      [0.5, 0.5],
    );
    expect(out.quantiles[0][5] - out.quantiles[1][5]).toBeGreaterThan(offsets[1][5] - offsets[0][5]);
    expect(out.quantiles[1][5]).toBeLessThan(out.quantiles[2][5]);
    expect(out.quantiles[2][5]).toBeLessThan(out.quantiles[0][5]);
  });
});
