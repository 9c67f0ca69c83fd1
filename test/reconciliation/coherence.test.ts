import { describe, expect, test } from 'vitest';
import { prepareReconciliation, reconcile, reconciliationSpec } from '../../engine/reconciliation/reconcile.ts';
import { sampleCoherentPaths } from '../../engine/reconciliation/sample-paths.ts';
import { FIXTURE_NAMES, fixtureBase, fixtureStructure, loadFixture, type Fixture } from './fixtures.ts';

/**
 * Coherence, checked from the identifiers rather than from the structure the code built: every
 * aggregate's reconciled mean is the sum of the bottoms it covers, to 1e-9 relative. Quantiles
 * are the marginal quantiles of a coherent distribution: every sample path drawn from it is
 * coherent, its medians are coherent means, and its empirical quantiles are the reported ones.
 */

const COHERENCE = 1e-9;

/** Each series' bottoms, found by matching identifier values (null matches anything). */
function bottomsOf(fx: Fixture): number[][] {
  const bottoms = fx.series.flatMap((ids, i) => (ids.includes(null) ? [] : [i]));
  return fx.series.map((ids) => bottoms.filter((b) => ids.every((v, k) => v === null || v === fx.series[b][k])));
}

function largestIncoherence(fx: Fixture, values: (series: number) => number): number {
  let worst = 0;
  bottomsOf(fx).forEach((bottoms, i) => {
    const sum = bottoms.reduce((s, b) => s + values(b), 0);
    worst = Math.max(worst, Math.abs(values(i) - sum) / Math.max(1, Math.abs(values(i))));
  });
  return worst;
}

describe.each(FIXTURE_NAMES)('coherence on %s', (name) => {
  const fx = loadFixture(name);
  const structure = fixtureStructure(fx);
  const base = fixtureBase(fx);
  const specs = fx.cases.filter((c) => c.mean).map((c) => c.spec);
  const levels = [0.05, 0.1, 0.5, 0.9, 0.95];

  test('the base forecasts are not coherent, so the tests below test something', () => {
    expect(largestIncoherence(fx, (i) => fx.mean[i][0])).toBeGreaterThan(1e-3);
  });

  test.each(specs.map((s) => [JSON.stringify(s), s] as const))('%s: means and medians are coherent at every step', (_, spec) => {
    const result = reconcile(structure, reconciliationSpec(spec), base, levels);
    for (let step = 0; step < fx.mean[0].length; step++) {
      expect(largestIncoherence(fx, (i) => result.mean[i][step])).toBeLessThan(COHERENCE);
      expect(largestIncoherence(fx, (i) => result.quantiles![i][2][step])).toBeLessThan(COHERENCE);
    }
  });

  test.each(specs.map((s) => [JSON.stringify(s), s] as const))('%s: quantiles are those of coherent sample paths', (_, spec) => {
    const parsed = reconciliationSpec(spec);
    const result = reconcile(structure, parsed, base, levels);
    const step = 2;
    const paths = sampleCoherentPaths(prepareReconciliation(structure, parsed, base), base.sd!, step, 4000, 7);
    for (const path of paths.slice(0, 50)) expect(largestIncoherence(fx, (i) => path[i])).toBeLessThan(COHERENCE);
    for (let i = 0; i < fx.series.length; i++) {
      const sorted = Float64Array.from(paths, (p) => p[i]).sort();
      const sd = result.sd![i][step];
      levels.forEach((tau, k) => {
        // A sample quantile's standard error is about sqrt(tau (1 - tau) / N) / phi(z) sd: at most 0.035 sd here.
        const empirical = sorted[Math.floor(tau * sorted.length)];
        expect(Math.abs(empirical - result.quantiles![i][k][step])).toBeLessThan(0.15 * sd + 1e-9);
      });
    }
  });
});

test('an aggregate is no wider than the sum of its parts: the normal sd is subadditive', () => {
  const fx = loadFixture('tree3');
  const result = reconcile(fixtureStructure(fx), reconciliationSpec({ method: 'min_trace', estimator: 'mint_shrink' }), fixtureBase(fx), [0.1, 0.9]);
  bottomsOf(fx).forEach((bottoms, i) => {
    const parts = bottoms.reduce((s, b) => s + result.sd![b][0], 0);
    expect(result.sd![i][0]).toBeLessThanOrEqual(parts * (1 + 1e-12));
  });
});
