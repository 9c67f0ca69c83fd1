import { gaussianQuantiles, normalQuantile } from '../../models/numerics/normal.ts';
import { ReconciliationError } from './reconciliation-error.ts';

/**
 * The normal approximation's two ends. A base forecast's standard deviation is read from its
 * quantiles, as hierarchicalforecast reads it from its intervals: the mean over symmetric pairs
 * (tau, 1 - tau) of (q_hi - q_lo) / (2 z), floored at zero. Reconciled quantiles are mean + z sd.
 */

/** Two levels count as a symmetric pair when they sum to one within this. */
const PAIR_TOLERANCE = 1e-9;

/** Standard deviation per step from one array per quantile level (`levels` in the same order). */
export function sdFromQuantiles(levels: readonly number[], quantiles: readonly ArrayLike<number>[]): Float64Array {
  const pairs: [number, number][] = [];
  levels.forEach((tau, lo) => {
    const hi = levels.findIndex((other) => Math.abs(other + tau - 1) < PAIR_TOLERANCE);
    if (tau < 0.5 && hi >= 0) pairs.push([lo, hi]);
  });
  if (pairs.length === 0) {
    throw new ReconciliationError('invalid_input', `the quantile levels ${levels.join(', ')} hold no symmetric pair (tau and 1 - tau) to read a spread from`);
  }
  const steps = quantiles[0].length;
  const sd = new Float64Array(steps);
  for (const [lo, hi] of pairs) {
    const width = 2 * normalQuantile(levels[hi]);
    for (let t = 0; t < steps; t++) sd[t] += (quantiles[hi][t] - quantiles[lo][t]) / width / pairs.length;
  }
  for (let t = 0; t < steps; t++) sd[t] = Math.max(sd[t], 0);
  return sd;
}

/** One array per level: mean + z(level) sd. */
export const quantilesFromSd = (mean: Float64Array, sd: Float64Array, levels: readonly number[]): Float64Array[] => gaussianQuantiles(mean, sd, levels);
