import { normalSampler, rng } from '../../models/numerics/random.ts';
import { coherentRows, type PreparedReconciliation } from './reconcile.ts';

/**
 * Joint sample paths of one horizon step from the reconciled distribution: base errors drawn
 * with the covariance the method assumes, added to the base means, and passed through the
 * method's map, so every path is coherent. The quantiles `reconcile` reports are this
 * distribution's marginal quantiles (docs/decisions/050-probabilistic-reconciliation.md).
 */
export function sampleCoherentPaths(
  prepared: PreparedReconciliation,
  sdBySeries: readonly ArrayLike<number>[],
  step: number,
  count: number,
  seed: number,
): Float64Array[] {
  const { structure, map, meansByStep } = prepared;
  const n = structure.rowCount;
  const sd = new Float64Array(n);
  for (let row = 0; row < n; row++) sd[row] = sdBySeries[structure.seriesOfRow[row]][step];
  const normal = normalSampler(rng(seed));
  const errors = new Float64Array(n);
  const bottoms = new Float64Array(structure.bottomCount);
  const rows = new Float64Array(n);
  return Array.from({ length: count }, () => {
    map.drawBaseErrors(sd, normal, errors);
    for (let row = 0; row < n; row++) errors[row] += meansByStep[step][row];
    map.bottoms(step, errors, bottoms);
    coherentRows(structure, bottoms, rows);
    const path = new Float64Array(n);
    for (let row = 0; row < n; row++) path[structure.seriesOfRow[row]] = rows[row];
    return path;
  });
}
