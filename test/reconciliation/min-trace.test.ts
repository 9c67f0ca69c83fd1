import { describe, expect, test } from 'vitest';
import { buildHierarchy, type HierarchyStructure } from '../../engine/reconciliation/hierarchy-structure.ts';
import { minTraceWeights, type MinTraceEstimator } from '../../engine/reconciliation/min-trace-weights.ts';
import { reconcile, reconciliationSpec } from '../../engine/reconciliation/reconcile.ts';
import { invert } from '../../models/numerics/linalg.ts';
import { normalSampler, rng } from '../../models/numerics/random.ts';

/**
 * The constraint form against the textbook one, independently of hierarchicalforecast: on a
 * crossed structure, ỹ = S (S'W⁻¹S)⁻¹ S'W⁻¹ ŷ and its covariance S P V P'S', computed with dense
 * matrices, equal what min_trace returns with W kept as a diagonal plus a low-rank term.
 */

const normal = normalSampler(rng(11));

/** Crossed: 3 regions x 4 products, with every margin and the total. */
function crossed(): { structure: HierarchyStructure; n: number } {
  const regions = ['r1', 'r2', 'r3'];
  const products = ['p1', 'p2', 'p3', 'p4'];
  const series = [[null, null], ...regions.map((r) => [r, null]), ...products.map((p) => [null, p]), ...regions.flatMap((r) => products.map((p) => [r, p]))];
  return {
    structure: buildHierarchy(
      ['region', 'product'],
      series.map((ids) => ({ ids })),
    ),
    n: series.length,
  };
}

const matmul = (A: Float64Array, B: Float64Array, m: number, k: number, p: number) => {
  const C = new Float64Array(m * p);
  for (let i = 0; i < m; i++) for (let t = 0; t < k; t++) for (let j = 0; j < p; j++) C[i * p + j] += A[i * k + t] * B[t * p + j];
  return C;
};
const transpose = (A: Float64Array, m: number, p: number) => Float64Array.from({ length: m * p }, (_, k) => A[(k % m) * p + Math.floor(k / m)]);

describe.each(['ols', 'wls_struct', 'wls_var', 'mint_shrink', 'mint_cov'] as MinTraceEstimator[])('min_trace %s', (estimator) => {
  const { structure, n } = crossed();
  const T = 40;
  const nb = structure.bottomCount;
  // Dense S in row order; series are given in row order here, so rows and series coincide.
  const S = new Float64Array(n * nb);
  for (let j = 0; j < structure.aggregateCount; j++)
    for (let m = structure.memberStart[j]; m < structure.memberStart[j + 1]; m++) S[j * nb + structure.members[m]] = 1;
  for (let b = 0; b < nb; b++) S[(structure.aggregateCount + b) * nb + b] = 1;
  const residualRows = Array.from({ length: n }, () => Float64Array.from({ length: T }, () => normal() * 3));
  for (let b = 0; b < nb; b++) for (let t = 0; t < T; t++) residualRows[structure.aggregateCount + b][t] += residualRows[0][t] * 0.3;
  const mean = Array.from({ length: n }, (_, i) => Float64Array.from({ length: 2 }, () => 50 + 10 * normal() + i));
  const sd = Array.from({ length: n }, () => Float64Array.from({ length: 2 }, () => 1 + Math.abs(normal())));

  test("matches S (S'W⁻¹S)⁻¹ S'W⁻¹ ŷ and its covariance, computed densely", () => {
    expect(structure.seriesOfRow).toEqual(Int32Array.from({ length: n }, (_, i) => i));
    const flat = new Float64Array(n * T);
    residualRows.forEach((r, i) => flat.set(r, i * T));
    const weights = minTraceWeights(structure, estimator, flat, T);
    const W = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      W[i * n + i] += weights.diagonal[i];
      if (weights.scale > 0)
        for (let j = 0; j < n; j++) for (let t = 0; t < T; t++) W[i * n + j] += weights.scale * weights.factor[i * T + t] * weights.factor[j * T + t];
    }
    const Winv = invert(W, n);
    const StWinv = matmul(transpose(S, n, nb), Winv, nb, n, n);
    const P = matmul(invert(matmul(StWinv, S, nb, n, nb), nb), StWinv, nb, nb, n);
    const SP = matmul(S, P, n, nb, n);
    const result = reconcile(structure, reconciliationSpec({ method: 'min_trace', estimator }), { mean, sd, residuals: residualRows });
    for (let step = 0; step < 2; step++) {
      const y = Float64Array.from(mean, (m) => m[step]);
      const expected = matmul(SP, y, n, n, 1);
      // V = G R G with R = W's correlations and G = diag(sd).
      const V = new Float64Array(n * n);
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) V[i * n + j] = (W[i * n + j] / Math.sqrt(W[i * n + i] * W[j * n + j])) * sd[i][step] * sd[j][step];
      const covariance = matmul(matmul(SP, V, n, n, n), transpose(SP, n, n), n, n, n);
      for (let i = 0; i < n; i++) {
        expect(result.mean[i][step]).toBeCloseTo(expected[i], 9);
        expect(result.sd![i][step]).toBeCloseTo(Math.sqrt(covariance[i * n + i]), 9);
      }
    }
  });
});
