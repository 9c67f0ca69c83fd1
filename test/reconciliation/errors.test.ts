import { describe, expect, test } from 'vitest';
import { buildHierarchy } from '../../engine/reconciliation/hierarchy-structure.ts';
import { reconcile, reconciliationSpec, type BaseForecasts, type ReconciliationInput } from '../../engine/reconciliation/reconcile.ts';
import { ReconciliationError, type ReconciliationErrorCode } from '../../engine/reconciliation/reconciliation-error.ts';
import { fixtureBase, fixtureStructure, loadFixture } from './fixtures.ts';

/** Every refusal is a ReconciliationError with its code, the option's path, and a message that names what is at fault. */

function refusal(run: () => unknown): ReconciliationError {
  try {
    run();
  } catch (e) {
    if (e instanceof ReconciliationError) return e;
    throw e;
  }
  throw new Error('expected a ReconciliationError');
}

const expectRefusal = (run: () => unknown, code: ReconciliationErrorCode, message: RegExp, path: string[] = []) => {
  const e = refusal(run);
  expect({ code: e.code, path: e.path }).toEqual({ code, path });
  expect(e.message).toMatch(message);
};

const tree = loadFixture('tree3');
const grouped = loadFixture('grouped');
const run = (fx: typeof tree, input: ReconciliationInput, base: BaseForecasts = fixtureBase(fx)) =>
  reconcile(fixtureStructure(fx), reconciliationSpec(input), base);

describe('unknown methods and options', () => {
  test('an unknown method', () => {
    expectRefusal(
      () => reconciliationSpec({ method: 'min_t' }),
      'unknown_method',
      /unknown reconciliation method "min_t"; expected one of bottom_up, top_down/,
      ['method'],
    );
  });

  test('an unknown estimator or proportions', () => {
    expectRefusal(() => reconciliationSpec({ method: 'min_trace', estimator: 'shrink' }), 'unknown_option', /unknown estimator "shrink".*mint_shrink/, [
      'estimator',
    ]);
    expectRefusal(() => reconciliationSpec({ method: 'top_down', proportions: 'historical' }), 'unknown_option', /unknown proportions "historical"/, [
      'proportions',
    ]);
    expectRefusal(() => reconciliationSpec({ method: 'middle_out' }), 'unknown_option', /middle_out needs middle_level/, ['middle_level']);
  });
});

describe('a hierarchy the method cannot take', () => {
  test.each([
    { method: 'top_down', proportions: 'average_proportions' },
    { method: 'middle_out', middle_level: ['state'] },
  ])('%o on a grouped structure', (input) => {
    expectRefusal(() => run(grouped, input), 'not_a_tree', /needs a strict tree, but the levels .*\{state\}, \{gender\}.* are crossed/, ['method']);
  });

  test('bottom_up and min_trace take it', () => {
    expect(() => run(grouped, { method: 'bottom_up' })).not.toThrow();
    expect(() => run(grouped, { method: 'min_trace', estimator: 'mint_shrink' })).not.toThrow();
  });
});

describe('a level with no data', () => {
  test('a level the query selected has no series', () => {
    const series = tree.series.filter((ids) => ids[0] === null || ids[1] !== null).map((ids) => ({ ids }));
    expectRefusal(
      () => buildHierarchy(tree.identifiers, series, [[], ['region'], ['region', 'store']]),
      'level_without_data',
      /the level \{region\} has no series/,
    );
  });

  test('no bottom series', () => {
    const series = tree.series.filter((ids) => ids.includes(null)).map((ids) => ({ ids }));
    expectRefusal(() => buildHierarchy(tree.identifiers, series), 'level_without_data', /the bottom level \{region, store\} has no series/);
  });

  test('an aggregate with no bottom under it', () => {
    const series = [...tree.series, ['east', null]].map((ids) => ({ ids }));
    expectRefusal(() => buildHierarchy(tree.identifiers, series), 'level_without_data', /the series region=east has no bottom series under it/);
  });

  test('a series without a base forecast', () => {
    const base = fixtureBase(tree);
    const mean = base.mean.map((m) => Float64Array.from(m));
    mean[2][3] = NaN;
    expectRefusal(
      () => run(tree, { method: 'bottom_up' }, { ...base, mean }),
      'level_without_data',
      /region=south \(level \{region\}\) has no base forecast at step 4/,
    );
  });

  test('a middle level the hierarchy does not have', () => {
    expectRefusal(() => run(tree, { method: 'middle_out', middle_level: ['store'] }), 'level_without_data', /the middle level \{store\} has no series/, [
      'middle_level',
    ]);
  });
});

describe('too few observations', () => {
  const base = fixtureBase(tree);
  const shortened = (n: number) => ({ ...base, residuals: base.residuals!.map((r) => (r as Float64Array).slice(0, n)) });

  test('mint_shrink on two residuals, or none', () => {
    expectRefusal(
      () => run(tree, { method: 'min_trace', estimator: 'mint_shrink' }, shortened(2)),
      'too_few_observations',
      /needs at least 3 in-sample residuals per series; got 2/,
      ['estimator'],
    );
    expectRefusal(
      () => run(tree, { method: 'min_trace', estimator: 'mint_shrink' }, { ...base, residuals: undefined }),
      'too_few_observations',
      /none were given/,
      ['estimator'],
    );
    expect(() => run(tree, { method: 'min_trace', estimator: 'mint_shrink' }, shortened(3))).not.toThrow();
  });

  test('wls_var without residuals; top_down by history without history', () => {
    expectRefusal(() => run(tree, { method: 'min_trace', estimator: 'wls_var' }, { ...base, residuals: undefined }), 'too_few_observations', /wls_var needs/, [
      'estimator',
    ]);
    expectRefusal(
      () => run(tree, { method: 'top_down', proportions: 'average_proportions' }, { ...base, history: undefined }),
      'too_few_observations',
      /needs the series' history/,
      ['proportions'],
    );
  });

  test('a residual missing inside the window', () => {
    const residuals = base.residuals!.map((r) => Float64Array.from(r));
    residuals[5][10] = NaN;
    expectRefusal(
      () => run(tree, { method: 'min_trace', estimator: 'wls_var' }, { ...base, residuals }),
      'too_few_observations',
      /has no residuals at step 11/,
    );
  });

  test('mint_cov with fewer residuals than aggregates leaves the system singular', () => {
    expectRefusal(
      () => run(tree, { method: 'min_trace', estimator: 'mint_cov' }, shortened(4)),
      'ill_conditioned',
      /singular.*mint_cov needs more than 5 residuals/,
      ['estimator'],
    );
  });

  test("mint_cov where each aggregate's residuals are its bottoms' sums (a naive model): singular, not rounding noise", () => {
    const structure = fixtureStructure(tree);
    const a = structure.aggregateCount;
    const residuals = base.residuals!.map((r) => Float64Array.from(r));
    for (let j = 0; j < a; j++) {
      residuals[j].fill(0);
      for (let k = structure.memberStart[j]; k < structure.memberStart[j + 1]; k++) {
        residuals[a + structure.members[k]].forEach((v, t) => (residuals[j][t] += v));
      }
    }
    expectRefusal(() => run(tree, { method: 'min_trace', estimator: 'mint_cov' }, { ...base, residuals }), 'ill_conditioned', /singular/, ['estimator']);
    // mint_shrink's diagonal keeps the same residuals solvable.
    expect(() => run(tree, { method: 'min_trace', estimator: 'mint_shrink' }, { ...base, residuals })).not.toThrow();
  });
});
