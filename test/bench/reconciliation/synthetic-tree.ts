import { normalSampler, rng } from '../../../models/numerics/random.ts';
import type { BaseForecasts } from '../../../engine/reconciliation/reconcile.ts';
import type { SeriesIdentity } from '../../../engine/reconciliation/hierarchy-structure.ts';

/**
 * A seeded three-level tree for the scale benchmark: the total, `middles` groups, and `bottoms`
 * series spread evenly over them. Series come in hierarchicalforecast's order (total, groups,
 * bottoms), with a history, base forecasts that are not coherent, and in-sample residuals that
 * share a factor per group, so mint_shrink has correlations to estimate.
 */

export interface SyntheticTree {
  readonly identifiers: readonly string[];
  readonly series: readonly SeriesIdentity[];
  readonly base: Required<BaseForecasts>;
  /** Group of each bottom. */
  readonly groupOf: Int32Array;
}

export function syntheticTree(bottoms: number, middles: number, horizon: number, observations: number, seed = 20261204): SyntheticTree {
  const uniform = rng(seed);
  const normal = normalSampler(uniform);
  const groupOf = Int32Array.from({ length: bottoms }, (_, b) => Math.floor((b * middles) / bottoms));
  const series: SeriesIdentity[] = [{ ids: [null, null] }];
  for (let m = 0; m < middles; m++) series.push({ ids: [`g${m}`, null] });
  for (let b = 0; b < bottoms; b++) series.push({ ids: [`g${groupOf[b]}`, `s${b}`] });
  const n = series.length;
  const length = observations + horizon;
  const truth = Array.from({ length: n }, () => new Float64Array(length));
  const residuals = Array.from({ length: n }, () => new Float64Array(observations));
  const shared = Array.from({ length: middles }, () => Float64Array.from({ length: observations }, normal));
  for (let b = 0; b < bottoms; b++) {
    const row = 1 + middles + b;
    const level = 10 + 90 * uniform();
    const phase = 6 * uniform();
    for (let t = 0; t < length; t++) truth[row][t] = level * (1 + 0.2 * Math.sin((2 * Math.PI * t) / 4 + phase)) + 2 * normal();
    for (let t = 0; t < observations; t++) residuals[row][t] = 2 * normal() + shared[groupOf[b]][t];
  }
  // Aggregates: sums of their bottoms, values and residuals alike, plus errors of their own.
  for (let b = 0; b < bottoms; b++) {
    const row = 1 + middles + b;
    for (const target of [0, 1 + groupOf[b]]) {
      for (let t = 0; t < length; t++) truth[target][t] += truth[row][t];
      for (let t = 0; t < observations; t++) residuals[target][t] += residuals[row][t];
    }
  }
  const size = (row: number) => (row === 0 ? bottoms : row <= middles ? bottoms / middles : 1);
  for (let row = 0; row <= middles; row++) for (let t = 0; t < observations; t++) residuals[row][t] += Math.sqrt(size(row)) * normal();
  const mean = truth.map((y, row) => Float64Array.from({ length: horizon }, (_, k) => y[observations + k] + 2 * Math.sqrt(size(row)) * normal()));
  const sd = truth.map((_, row) => Float64Array.from({ length: horizon }, (_, k) => Math.sqrt(size(row)) * (2 + 0.2 * k)));
  const history = truth.map((y) => y.slice(0, observations));
  return { identifiers: ['group', 'series'], series, base: { mean, sd, history, residuals }, groupOf };
}
