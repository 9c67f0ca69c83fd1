import { describe, expect, test } from 'vitest';
import { reconcile, reconciliationSpec } from '../../engine/reconciliation/reconcile.ts';
import { ReconciliationError } from '../../engine/reconciliation/reconciliation-error.ts';
import { FIXTURE_NAMES, fixtureBase, fixtureStructure, largestRelativeError, loadFixture } from './fixtures.ts';

/**
 * Parity with hierarchicalforecast (test/fixtures/reconciliation/, made by
 * tools/reference/hierarchical-fixtures.py): the same base forecasts, history and residuals on
 * the same hierarchy give the same reconciled means, and the same Normality quantiles where
 * hierarchicalforecast offers them, to 1e-8 relative; what it refuses, we refuse.
 */

const TOLERANCE = 1e-8;

describe.each(FIXTURE_NAMES)('parity with hierarchicalforecast on %s', (name) => {
  const fx = loadFixture(name);
  const structure = fixtureStructure(fx);
  const base = fixtureBase(fx);
  const label = (spec: object) => Object.values(spec).flat().join(' ');

  test.each(fx.cases.filter((c) => c.mean).map((c) => [label(c.spec), c] as const))('%s', (_, c) => {
    const result = reconcile(structure, reconciliationSpec(c.spec), base, fx.quantile_levels);
    expect(largestRelativeError(result.mean, c.mean!)).toBeLessThan(TOLERANCE);
    if (c.quantiles) {
      for (let level = 0; level < fx.quantile_levels.length; level++) {
        const ours = result.quantiles!.map((q) => q[level]);
        const theirs = c.quantiles.map((q) => q[level]);
        expect(largestRelativeError(ours, theirs)).toBeLessThan(TOLERANCE);
      }
    }
  });

  test.each(fx.cases.filter((c) => c.error).map((c) => [label(c.spec), c] as const))('%s is refused, as hierarchicalforecast refuses it', (_, c) => {
    expect(c.error).toMatch(/strictly hierarchical/);
    const attempt = () => reconcile(structure, reconciliationSpec(c.spec), base);
    expect(attempt).toThrow(ReconciliationError);
    expect(attempt).toThrow(expect.objectContaining({ code: 'not_a_tree' }));
  });
});
