import { ancestorInLevel, childrenOf, type HierarchyStructure } from './hierarchy-structure.ts';
import type { LinearReconciler } from './linear-reconciler.ts';
import { ReconciliationError } from './reconciliation-error.ts';

/**
 * bottom_up, top_down and middle_out are one operation: every bottom takes a proportion of one
 * anchor's base forecast, the anchor being its ancestor in an anchor level (the bottoms
 * themselves, the first level, or the middle level). Proportions follow hierarchicalforecast's
 * TopDown: the base forecasts' own shares down the tree, or shares of the history.
 *
 * Forecast proportions depend on the base forecasts; they are fixed from the means, so the map
 * stays linear and the same map carries the variances and sample paths
 * (docs/decisions/050-probabilistic-reconciliation.md).
 */

export const TOP_DOWN_PROPORTIONS = ['forecast_proportions', 'average_proportions', 'proportion_averages'] as const;
export type TopDownProportions = (typeof TOP_DOWN_PROPORTIONS)[number];

/** hierarchicalforecast's threshold below which children's forecasts are split evenly. */
const NEGLIGIBLE_SUM = 1e-8;

export interface AnchoredInputs {
  /** Base means per horizon step, one value per row. */
  readonly meansByStep: readonly Float64Array[];
  /** Observed history, n x T row-major (structure rows); read by the historical proportions. */
  readonly history: Float64Array | null;
  readonly observations: number;
}

export function anchoredReconciler(
  structure: HierarchyStructure,
  anchorLevel: number,
  proportions: TopDownProportions,
  inputs: AnchoredInputs,
): LinearReconciler {
  const a = structure.aggregateCount;
  const bottomLevel = structure.levels.length - 1;
  const anchor = new Int32Array(structure.bottomCount);
  for (let b = 0; b < structure.bottomCount; b++) anchor[b] = anchorLevel === bottomLevel ? a + b : ancestorInLevel(structure, a + b, anchorLevel);

  const steps = inputs.meansByStep.length;
  let shares: Float64Array[];
  if (anchorLevel === bottomLevel) shares = Array(steps).fill(new Float64Array(structure.bottomCount).fill(1));
  else if (proportions === 'forecast_proportions') shares = forecastShares(structure, anchorLevel, inputs.meansByStep);
  else shares = Array(steps).fill(historicalShares(structure, anchor, proportions, inputs));

  return {
    bottoms(step, y, out) {
      const p = shares[step];
      for (let b = 0; b < structure.bottomCount; b++) out[b] = p[b] * y[anchor[b]];
    },

    variances(step, sd) {
      const p = shares[step];
      const out = new Float64Array(structure.rowCount);
      for (let b = 0; b < structure.bottomCount; b++) out[a + b] = (p[b] * sd[anchor[b]]) ** 2;
      // An aggregate's value is a sum over anchors of (its bottoms' shares) x (the anchor's forecast).
      const coefficient = new Float64Array(structure.rowCount);
      const touched: number[] = [];
      for (let j = 0; j < a; j++) {
        for (let m = structure.memberStart[j]; m < structure.memberStart[j + 1]; m++) {
          const b = structure.members[m];
          if (coefficient[anchor[b]] === 0) touched.push(anchor[b]);
          coefficient[anchor[b]] += p[b];
        }
        let v = 0;
        for (const source of touched) {
          v += (coefficient[source] * sd[source]) ** 2;
          coefficient[source] = 0;
        }
        touched.length = 0;
        out[j] = v;
      }
      return out;
    },

    drawBaseErrors(sd, normal, out) {
      for (let i = 0; i < out.length; i++) out[i] = sd[i] * normal();
    },
  };
}

/** Each bottom's share of its anchor: the product of its forecast's share among its siblings, down from the anchor. */
function forecastShares(structure: HierarchyStructure, anchorLevel: number, meansByStep: readonly Float64Array[]): Float64Array[] {
  const children = childrenOf(structure);
  const a = structure.aggregateCount;
  return meansByStep.map((y) => {
    const share = new Float64Array(structure.rowCount);
    for (const row of structure.levels[anchorLevel].rows) share[row] = 1;
    for (let l = anchorLevel; l < structure.levels.length - 1; l++) {
      for (const parent of structure.levels[l].rows) {
        const kids = children[parent];
        let sum = 0;
        for (const kid of kids) sum += y[kid];
        const even = Math.abs(sum) < NEGLIGIBLE_SUM;
        for (const kid of kids) share[kid] = share[parent] * (even ? 1 / kids.length : y[kid] / sum);
      }
    }
    return share.slice(a);
  });
}

/** average_proportions: the mean of the bottom's share over time; proportion_averages: the share of the means. NaN steps are skipped. */
function historicalShares(structure: HierarchyStructure, anchor: Int32Array, proportions: TopDownProportions, inputs: AnchoredInputs): Float64Array {
  const { history, observations: T } = inputs;
  if (history === null || T < 1) {
    throw new ReconciliationError('too_few_observations', `${proportions} needs the series' history; ${history === null ? 'none was given' : 'it is empty'}`, [
      'proportions',
    ]);
  }
  const a = structure.aggregateCount;
  const nanMean = (values: (t: number) => number) => {
    let s = 0;
    let count = 0;
    for (let t = 0; t < T; t++) {
      const v = values(t);
      if (Number.isNaN(v)) continue;
      s += v;
      count++;
    }
    return s / count;
  };
  const out = new Float64Array(structure.bottomCount);
  for (let b = 0; b < structure.bottomCount; b++) {
    const own = (a + b) * T;
    const top = anchor[b] * T;
    out[b] =
      proportions === 'average_proportions'
        ? nanMean((t) => history[own + t] / history[top + t])
        : nanMean((t) => history[own + t]) / nanMean((t) => history[top + t]);
  }
  return out;
}
