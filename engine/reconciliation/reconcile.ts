import { anchoredReconciler, TOP_DOWN_PROPORTIONS, type TopDownProportions } from './disaggregation.ts';
import { describeLevel, type HierarchyStructure } from './hierarchy-structure.ts';
import type { LinearReconciler } from './linear-reconciler.ts';
import { minTraceReconciler } from './min-trace.ts';
import { MIN_TRACE_ESTIMATORS, minTraceWeights, type MinTraceEstimator } from './min-trace-weights.ts';
import { quantilesFromSd } from './normal-spread.ts';
import { ReconciliationError } from './reconciliation-error.ts';

/**
 * Reconciles base forecasts of every series of a hierarchy so that every aggregate equals the sum
 * of its bottoms, at every horizon step: bottom_up, top_down, middle_out and min_trace as
 * hierarchicalforecast defines them. Inputs and outputs are per series, in the order the
 * structure was built from; quantiles come from the normal approximation of
 * docs/decisions/050-probabilistic-reconciliation.md.
 */

export const RECONCILIATION_METHODS = ['bottom_up', 'top_down', 'middle_out', 'min_trace'] as const;
export type ReconciliationMethod = (typeof RECONCILIATION_METHODS)[number];

export type ReconciliationSpec =
  | { readonly method: 'bottom_up' }
  | { readonly method: 'top_down'; readonly proportions: TopDownProportions }
  | { readonly method: 'middle_out'; readonly middleLevel: readonly string[]; readonly proportions: TopDownProportions }
  | { readonly method: 'min_trace'; readonly estimator: MinTraceEstimator };

/** The `reconciliation` object of a query, as a client writes it. */
export interface ReconciliationInput {
  readonly method: string;
  /** top_down and middle_out; default forecast_proportions. */
  readonly proportions?: string;
  /** min_trace; default wls_struct, the one that reads neither residuals nor history. */
  readonly estimator?: string;
  /** middle_out: the identifiers its middle level keeps. */
  readonly middle_level?: readonly string[];
}

export interface BaseForecasts {
  /** Per series: the base forecast's mean, one value per horizon step. */
  readonly mean: readonly ArrayLike<number>[];
  /** Per series: the base forecast's standard deviation per step; needed for quantiles. */
  readonly sd?: readonly ArrayLike<number>[];
  /** Per series: observed values on one common window (NaN allowed); top_down's historical proportions. */
  readonly history?: readonly ArrayLike<number>[];
  /** Per series: in-sample one-step residuals on one common window; wls_var, mint_shrink, mint_cov. */
  readonly residuals?: readonly ArrayLike<number>[];
}

export interface ReconciledForecasts {
  readonly mean: Float64Array[];
  /** Null without base standard deviations. */
  readonly sd: Float64Array[] | null;
  /** Per series, one array per requested level; null without base standard deviations. */
  readonly quantiles: Float64Array[][] | null;
}

const pick = <T extends string>(value: string | undefined, fallback: T, choices: readonly T[], option: string): T => {
  if (value === undefined) return fallback;
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new ReconciliationError('unknown_option', `unknown ${option} "${value}"; expected one of ${choices.join(', ')}`, [option]);
};

/** A client's `reconciliation` object as a spec, or the typed refusal of its unknown method or option. */
export function reconciliationSpec(input: ReconciliationInput): ReconciliationSpec {
  const method = input.method;
  if (method === 'bottom_up') return { method };
  if (method === 'top_down') return { method, proportions: pick(input.proportions, 'forecast_proportions', TOP_DOWN_PROPORTIONS, 'proportions') };
  if (method === 'middle_out') {
    if (!input.middle_level)
      throw new ReconciliationError('unknown_option', 'middle_out needs middle_level: the identifiers its middle level keeps', ['middle_level']);
    return { method, middleLevel: input.middle_level, proportions: pick(input.proportions, 'forecast_proportions', TOP_DOWN_PROPORTIONS, 'proportions') };
  }
  if (method === 'min_trace') return { method, estimator: pick(input.estimator, 'wls_struct', MIN_TRACE_ESTIMATORS, 'estimator') };
  throw new ReconciliationError('unknown_method', `unknown reconciliation method "${method}"; expected one of ${RECONCILIATION_METHODS.join(', ')}`, [
    'method',
  ]);
}

export interface PreparedReconciliation {
  readonly structure: HierarchyStructure;
  readonly map: LinearReconciler;
  /** Base means per step, one value per row (structure order). */
  readonly meansByStep: Float64Array[];
}

/** The method's linear map for these base forecasts, with every input checked. */
export function prepareReconciliation(structure: HierarchyStructure, spec: ReconciliationSpec, base: BaseForecasts): PreparedReconciliation {
  const n = structure.rowCount;
  if (base.mean.length !== n) throw new ReconciliationError('invalid_input', `${base.mean.length} base forecasts for ${n} series`);
  const horizon = base.mean[0]?.length ?? 0;
  const meansByStep = Array.from({ length: horizon }, () => new Float64Array(n));
  for (let row = 0; row < n; row++) {
    const mean = base.mean[structure.seriesOfRow[row]];
    if (mean.length !== horizon) throw new ReconciliationError('invalid_input', `base forecasts of ${mean.length} and ${horizon} steps`);
    for (let step = 0; step < horizon; step++) {
      if (!Number.isFinite(mean[step])) {
        throw new ReconciliationError('level_without_data', `the series ${structure.describeRow(row)} has no base forecast at step ${step + 1}`);
      }
      meansByStep[step][row] = mean[step];
    }
  }
  return { structure, map: linearMap(structure, spec, base, meansByStep), meansByStep };
}

function linearMap(structure: HierarchyStructure, spec: ReconciliationSpec, base: BaseForecasts, meansByStep: Float64Array[]): LinearReconciler {
  if (spec.method === 'min_trace') {
    const reads = spec.estimator === 'wls_var' || spec.estimator === 'mint_shrink' || spec.estimator === 'mint_cov';
    const residuals = reads && base.residuals ? window(structure, base.residuals, 'residuals', true) : null;
    const weights = minTraceWeights(structure, spec.estimator, residuals?.values ?? null, residuals?.observations ?? 0);
    return minTraceReconciler(structure, weights, spec.estimator);
  }
  const bottomLevel = structure.levels.length - 1;
  if (spec.method === 'bottom_up') return anchoredReconciler(structure, bottomLevel, 'forecast_proportions', { meansByStep, history: null, observations: 0 });
  if (!structure.isTree) {
    const levels = structure.levels.map(describeLevel).join(', ');
    throw new ReconciliationError(
      'not_a_tree',
      `${spec.method} disaggregates along single parents and needs a strict tree, but the levels ${levels} are crossed (a grouped structure); use bottom_up or min_trace`,
      ['method'],
    );
  }
  const anchorLevel = spec.method === 'top_down' ? 0 : middleLevelIndex(structure, spec.middleLevel);
  const history = spec.proportions === 'forecast_proportions' || !base.history ? null : window(structure, base.history, 'history', false);
  return anchoredReconciler(structure, anchorLevel, spec.proportions, {
    meansByStep,
    history: history?.values ?? null,
    observations: history?.observations ?? 0,
  });
}

function middleLevelIndex(structure: HierarchyStructure, kept: readonly string[]): number {
  const wanted = new Set(kept);
  const index = structure.levels.findIndex((level) => level.kept.length === wanted.size && level.kept.every((name) => wanted.has(name)));
  if (index < 0) {
    const known = structure.levels.map(describeLevel).join(', ');
    throw new ReconciliationError('level_without_data', `the middle level ${describeLevel({ kept: [...kept] })} has no series; the levels are ${known}`, [
      'middle_level',
    ]);
  }
  return index;
}

/** Per-series windows as one n x T row-major array in structure order. */
function window(structure: HierarchyStructure, perSeries: readonly ArrayLike<number>[], name: string, finite: boolean) {
  const n = structure.rowCount;
  if (perSeries.length !== n) throw new ReconciliationError('invalid_input', `${perSeries.length} ${name} windows for ${n} series`);
  const T = perSeries[0].length;
  const values = new Float64Array(n * T);
  for (let row = 0; row < n; row++) {
    const w = perSeries[structure.seriesOfRow[row]];
    if (w.length !== T) throw new ReconciliationError('invalid_input', `${name} windows of ${w.length} and ${T} steps`);
    for (let t = 0; t < T; t++) {
      if (finite && !Number.isFinite(w[t])) {
        throw new ReconciliationError('too_few_observations', `the series ${structure.describeRow(row)} has no ${name} at step ${t + 1} of the window`);
      }
      values[row * T + t] = w[t];
    }
  }
  return { values, observations: T };
}

/** Reconciled means, and standard deviations and quantiles when the base standard deviations are given. */
export function reconcile(structure: HierarchyStructure, spec: ReconciliationSpec, base: BaseForecasts, levels: readonly number[] = []): ReconciledForecasts {
  const { map, meansByStep } = prepareReconciliation(structure, spec, base);
  const n = structure.rowCount;
  const horizon = meansByStep.length;
  const mean = Array.from({ length: n }, () => new Float64Array(horizon));
  const sd = base.sd ? Array.from({ length: n }, () => new Float64Array(horizon)) : null;
  if (base.sd && base.sd.length !== n) throw new ReconciliationError('invalid_input', `${base.sd.length} base standard deviations for ${n} series`);
  const bottoms = new Float64Array(structure.bottomCount);
  const rows = new Float64Array(n);
  for (let step = 0; step < horizon; step++) {
    map.bottoms(step, meansByStep[step], bottoms);
    coherentRows(structure, bottoms, rows);
    for (let row = 0; row < n; row++) mean[structure.seriesOfRow[row]][step] = rows[row];
    if (!base.sd || !sd) continue;
    const baseSd = new Float64Array(n);
    for (let row = 0; row < n; row++) baseSd[row] = base.sd[structure.seriesOfRow[row]][step];
    const variance = map.variances(step, baseSd);
    for (let row = 0; row < n; row++) sd[structure.seriesOfRow[row]][step] = Math.sqrt(variance[row]);
  }
  return { mean, sd, quantiles: sd ? mean.map((m, i) => quantilesFromSd(m, sd[i], levels)) : null };
}

/** Every row's value from the bottoms: the bottoms themselves, and each aggregate as their sum. */
export function coherentRows(structure: HierarchyStructure, bottoms: Float64Array, out: Float64Array): void {
  const a = structure.aggregateCount;
  for (let j = 0; j < a; j++) {
    let s = 0;
    for (let m = structure.memberStart[j]; m < structure.memberStart[j + 1]; m++) s += bottoms[structure.members[m]];
    out[j] = s;
  }
  out.set(bottoms, a);
}
