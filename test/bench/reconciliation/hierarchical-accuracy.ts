import type { HierarchicalSet } from '../../../datasets/hierarchical.ts';
import { crps } from '../../../engine/accuracy-metrics.ts';
import { buildHierarchy, type HierarchyStructure, type SeriesIdentity } from '../../../engine/reconciliation/hierarchy-structure.ts';
import { sdFromQuantiles } from '../../../engine/reconciliation/normal-spread.ts';
import { reconcile, reconciliationSpec, type ReconciliationInput } from '../../../engine/reconciliation/reconcile.ts';
import { ReconciliationError } from '../../../engine/reconciliation/reconciliation-error.ts';
import type { ForecastOutput, LocalModel } from '../../../models/contract/model-interface.ts';
import { mase, maseScale } from '../m4-scores.ts';
import { QUANTILE_GRID } from '../accuracy/scoring.ts';

/**
 * Accuracy of reconciliation on a real hierarchy: every series of every level is forecast by one
 * model over the last `holdout` quarters, then reconciled by each method. MASE (seasonal naive
 * scale, m = 4) and scaled CRPS (CRPS over the same scale, on the fixed quantile grid) are
 * averaged per level. In-sample residuals are one-step errors over the last `window` training
 * quarters, from a fit on the quarters before them carried forward with fixed parameters (the
 * model's reuse surface); the historical proportions read the same window.
 */

export interface PreparedSet {
  readonly structure: HierarchyStructure;
  readonly series: readonly (SeriesIdentity & { readonly values: Float64Array })[];
  readonly train: Float64Array[];
  readonly test: Float64Array[];
  readonly base: { mean: Float64Array[]; sd: Float64Array[]; quantiles: Float64Array[][]; history: Float64Array[]; residuals: Float64Array[] };
}

export interface MethodScores {
  readonly label: string;
  /** Per level, in structure order; null when the method refused. */
  readonly mase: number[] | null;
  readonly scaledCrps: number[] | null;
  /** Median time of the means alone, after a warm-up. */
  readonly seconds: number;
  /** The reconciled means, per series. */
  readonly mean?: Float64Array[];
  readonly refusal?: string;
}

/** Every series of every level of the set: sums of the bottoms over the identifiers a level drops. */
export function allLevels(set: HierarchicalSet): (SeriesIdentity & { values: Float64Array })[] {
  const out: (SeriesIdentity & { values: Float64Array })[] = [];
  for (const kept of set.levels) {
    const byKey = new Map<string, SeriesIdentity & { values: Float64Array }>();
    for (const b of set.bottoms) {
      const ids = set.identifiers.map((name, i) => (kept.includes(name) ? b.ids[i] : null));
      const key = ids.join('\u0000');
      const s = byKey.get(key) ?? byKey.set(key, { ids, values: new Float64Array(b.values.length) }).get(key)!;
      for (let t = 0; t < b.values.length; t++) s.values[t] += b.values[t];
    }
    out.push(...byKey.values());
  }
  return out;
}

export function prepareSet(set: HierarchicalSet, model: LocalModel, holdout: number, window: number): PreparedSet {
  const series = allLevels(set);
  const structure = buildHierarchy(set.identifiers, series, set.levels);
  const train = series.map((s) => s.values.slice(0, s.values.length - holdout));
  const test = series.map((s) => s.values.slice(s.values.length - holdout));
  const reuse = model.reuse;
  if (!reuse) throw new Error(`${model.name} cannot keep a fit, so it gives no one-step residuals here`);
  const task = (history: Float64Array, horizon: number) => ({ history, horizon, quantiles: QUANTILE_GRID, seasonLength: set.seasonLength });
  const outputs: ForecastOutput[] = train.map((y) => model.forecast(task(y, holdout)));
  const residuals = train.map((y) => {
    const start = y.length - window;
    const fitted = reuse.fit(task(y.subarray(0, start), 1));
    return Float64Array.from({ length: window }, (_, k) => {
      const history = y.subarray(0, start + k);
      const one = reuse.forecast(fitted, { ...task(history, 1), refit: { fcd: start, history: y.subarray(0, start), since: k } });
      return y[start + k] - one.mean[0];
    });
  });
  return {
    structure,
    series,
    train,
    test,
    base: {
      mean: outputs.map((o) => o.mean),
      quantiles: outputs.map((o) => o.quantiles),
      sd: outputs.map((o) => sdFromQuantiles(QUANTILE_GRID, o.quantiles)),
      history: train.map((y) => y.slice(y.length - window)),
      residuals,
    },
  };
}

/** Mean MASE and scaled CRPS per level of one set of forecasts (per series: mean and grid quantiles). */
function levelScores(prepared: PreparedSet, mean: Float64Array[], quantiles: Float64Array[][], seasonLength: number) {
  const { structure, train, test } = prepared;
  const sums = structure.levels.map(() => ({ mase: 0, crps: 0, count: 0 }));
  structure.seriesOfRow.forEach((i, row) => {
    const scale = maseScale(train[i], seasonLength);
    const m = mase(train[i], test[i], mean[i], seasonLength);
    const c = crps(test[i], QUANTILE_GRID, quantiles[i]);
    if (m === null || c === null || !(scale > 0)) return;
    const s = sums[structure.levelOfRow[row]];
    s.mase += m;
    s.crps += c / scale;
    s.count++;
  });
  return { mase: sums.map((s) => s.mase / s.count), scaledCrps: sums.map((s) => s.crps / s.count) };
}

export const methodLabel = (input: ReconciliationInput) =>
  [input.method, input.proportions, input.estimator, input.middle_level ? `at {${input.middle_level.join(', ')}}` : undefined].filter(Boolean).join(' ');

export function scoreMethods(prepared: PreparedSet, methods: readonly ReconciliationInput[], seasonLength: number): MethodScores[] {
  const base = levelScores(prepared, prepared.base.mean, prepared.base.quantiles, seasonLength);
  const out: MethodScores[] = [{ label: 'base (unreconciled)', ...base, seconds: 0 }];
  const { sd: _sd, ...meansOnly } = prepared.base;
  for (const input of methods) {
    try {
      const spec = reconciliationSpec(input);
      const result = reconcile(prepared.structure, spec, prepared.base, QUANTILE_GRID);
      out.push({
        label: methodLabel(input),
        ...levelScores(prepared, result.mean, result.quantiles!, seasonLength),
        seconds: medianSeconds(() => reconcile(prepared.structure, spec, meansOnly)),
        mean: result.mean,
      });
    } catch (e) {
      if (!(e instanceof ReconciliationError)) throw e;
      out.push({ label: methodLabel(input), mase: null, scaledCrps: null, seconds: 0, refusal: `${e.code}: ${e.message}` });
    }
  }
  return out;
}

/** Median wall time of `REPEATS` calls after the first (which compiles). */
const REPEATS = 9;
function medianSeconds(call: () => unknown): number {
  call();
  const times = Array.from({ length: REPEATS }, () => {
    const start = process.hrtime.bigint();
    call();
    return Number(process.hrtime.bigint() - start) / 1e9;
  }).sort((x, y) => x - y);
  return times[REPEATS >> 1];
}
