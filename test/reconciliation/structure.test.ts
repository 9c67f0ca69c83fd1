import { describe, expect, test } from 'vitest';
import { groupingMask } from '../../engine/beta/hierarchy.ts';
import { buildHierarchy, type HierarchyStructure } from '../../engine/reconciliation/hierarchy-structure.ts';
import { reconcile, reconciliationSpec } from '../../engine/reconciliation/reconcile.ts';
import { ReconciliationError } from '../../engine/reconciliation/reconciliation-error.ts';
import { fixtureStructure, loadFixture } from './fixtures.ts';

/** The sparse structure built from series as the beta schema logic describes them: levels, links, tree or grouped. */

const bottomsOfRow = (s: HierarchyStructure, row: number) =>
  row >= s.aggregateCount ? [row - s.aggregateCount] : [...s.members.subarray(s.memberStart[row], s.memberStart[row + 1])];

describe('a three-level tree', () => {
  const fx = loadFixture('tree3');
  const s = fixtureStructure(fx);

  test('levels coarsest first, with beta masks, and links both ways', () => {
    expect(s.levels.map((l) => l.kept)).toEqual([[], ['region'], ['region', 'store']]);
    expect(s.levels.map((l) => l.mask)).toEqual(s.levels.map((l) => groupingMask(fx.identifiers, new Set(l.kept))));
    expect([s.aggregateCount, s.bottomCount, s.rowCount]).toEqual([4, 7, 11]);
    expect(bottomsOfRow(s, s.rowOfSeries[0])).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // south (series 2) sums its three stores (series 6, 7, 8).
    expect(bottomsOfRow(s, s.rowOfSeries[2]).map((b) => s.seriesOfRow[s.aggregateCount + b])).toEqual([6, 7, 8]);
    const south = s.ancestors.subarray(s.ancestorStart[3], s.ancestorStart[4]);
    expect([...south].map((row) => s.seriesOfRow[row])).toEqual([0, 2]);
  });

  test('is a tree: every series below the total has exactly one parent, in the level above', () => {
    expect(s.isTree).toBe(true);
    const parentSeries = fx.series.map((_, i) => {
      const p = s.parent![s.rowOfSeries[i]];
      return p < 0 ? null : s.seriesOfRow[p];
    });
    expect(parentSeries).toEqual([null, 0, 0, 0, 1, 1, 2, 2, 2, 3, 3]);
  });

  test('the input order is kept for results, whatever order the series come in', () => {
    const order = [8, 0, 3, 10, 1, 5, 2, 9, 4, 7, 6];
    const shuffled = buildHierarchy(
      fx.identifiers,
      order.map((i) => ({ ids: fx.series[i] })),
    );
    const mean = order.map((i) => Float64Array.from(loadFixture('tree3').mean[i]));
    const result = reconcile(shuffled, reconciliationSpec({ method: 'min_trace', estimator: 'ols' }), { mean });
    const reference = reconcile(s, reconciliationSpec({ method: 'min_trace', estimator: 'ols' }), { mean: fx.mean.map((m) => Float64Array.from(m)) });
    order.forEach((i, k) => result.mean[k].forEach((v, t) => expect(v).toBeCloseTo(reference.mean[i][t], 9)));
  });
});

describe('a grouped (crossed) structure', () => {
  const fx = loadFixture('grouped');
  const s = fixtureStructure(fx);

  test('is not a tree: a bottom has a parent by state and another by gender', () => {
    expect(s.isTree).toBe(false);
    expect(s.parent).toBeNull();
    expect(s.levels.map((l) => l.kept)).toEqual([[], ['state'], ['gender'], ['state', 'gender']]);
    // NSW/F (series 6) is under the total, NSW and F.
    const b = s.rowOfSeries[6] - s.aggregateCount;
    expect([...s.ancestors.subarray(s.ancestorStart[b], s.ancestorStart[b + 1])].map((row) => s.seriesOfRow[row])).toEqual([0, 1, 4]);
  });
});

describe('other shapes', () => {
  test('an identifier kept at every level makes a forest: top_down runs from each root', () => {
    const series = [
      ['web', null],
      ['shop', null],
      ['web', 'a'],
      ['web', 'b'],
      ['shop', 'a'],
    ].map((ids) => ({ ids }));
    const s = buildHierarchy(['channel', 'sku'], series);
    expect(s.isTree).toBe(true);
    expect(s.levels[0].rows.length).toBe(2);
    const mean = [10, 6, 3, 5, 4].map((v) => Float64Array.of(v));
    const result = reconcile(s, reconciliationSpec({ method: 'top_down' }), { mean });
    expect(result.mean.map((m) => m[0])).toEqual([10, 6, 3.75, 6.25, 6]);
  });

  test('only bottoms: every method returns them as they are', () => {
    const s = buildHierarchy(['sku'], [{ ids: ['a'] }, { ids: ['b'] }]);
    const result = reconcile(s, reconciliationSpec({ method: 'min_trace', estimator: 'ols' }), { mean: [Float64Array.of(1), Float64Array.of(2)] });
    expect(result.mean.map((m) => m[0])).toEqual([1, 2]);
  });

  test('a series listed twice is refused', () => {
    const attempt = () => buildHierarchy(['sku'], [{ ids: [null] }, { ids: [null] }, { ids: ['a'] }]);
    expect(attempt).toThrow(ReconciliationError);
    expect(attempt).toThrow(/holds the series the total twice/);
  });

  test('a level skipped between two others still makes a tree when the levels nest', () => {
    const series = [
      [null, null, null],
      ['s', 'r', null],
      ['s', 'r', 'a'],
      ['s', 'r', 'b'],
    ].map((ids) => ({ ids }));
    const s = buildHierarchy(['state', 'region', 'store'], series);
    expect(s.isTree).toBe(true);
    expect(s.levels.map((l) => l.kept.length)).toEqual([0, 2, 3]);
  });
});
