import { EngineError } from '../errors.ts';
import { buildHierarchy } from '../reconciliation/hierarchy-structure.ts';
import { sdFromQuantiles } from '../reconciliation/normal-spread.ts';
import { reconcile } from '../reconciliation/reconcile.ts';
import { addDuration, stepsBetween, type Duration } from './duration.ts';
import { asReconciliationRefusal, levelName, type BetaReconciliation } from './reconciliation-settings.ts';

/**
 * One cutoff's reconciliation, shared by the synchronous answer and a job's per-cutoff activity:
 * the base forecasts of every series forecast at that cutoff become coherent forecasts, target
 * by target, through the algebra of engine/reconciliation/. The series are put in one canonical
 * order first, so both callers do the same arithmetic and get the same numbers to the bit.
 */

/** One target's base forecast of one series at the cutoff. */
export interface TargetBase {
  readonly mean: Float64Array;
  /** One array per level of `BetaReconciliation.taskLevels`. */
  readonly quantiles: readonly Float64Array[];
  /** The history window (`historyWindows`), when the method reads it. */
  readonly history?: Float64Array;
  /** One-step residuals (one-step-residuals.ts), when the estimator reads them. */
  readonly residuals?: Float64Array;
}

export interface SeriesBase {
  /** One value per identifier; null where the series' level aggregates it away. */
  readonly ids: readonly (string | null)[];
  /** One entry per target, in the query's order. */
  readonly targets: readonly TargetBase[];
}

export interface ReconciledTarget {
  readonly mean: Float64Array;
  /** One array per requested quantile level. */
  readonly quantiles: Float64Array[];
}

export interface CutoffContext {
  readonly identifiers: readonly string[];
  readonly targets: readonly string[];
  /** The quantile levels the answer holds. */
  readonly levels: readonly number[];
  /** The levels the query selected, as kept identifiers: one with no series here is refused. */
  readonly expectedLevels: readonly (readonly string[])[];
  /** The cutoff, for messages. */
  readonly cutoffText: string;
}

/** Identifier values in a fixed order: null first, then by text. */
function compareIds(a: readonly (string | null)[], b: readonly (string | null)[]): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (a[i] === null) return -1;
    if (b[i] === null) return 1;
    return a[i]! < b[i]! ? -1 : 1;
  }
  return 0;
}

/** Per series (input order): its level's name and, per target, the reconciled forecast. */
export function reconcileCutoff(r: BetaReconciliation, context: CutoffContext, items: readonly SeriesBase[]): { level: string; targets: ReconciledTarget[] }[] {
  const order = items.map((_, i) => i).sort((x, y) => compareIds(items[x].ids, items[y].ids));
  const sorted = order.map((i) => items[i]);
  const out: { level: string; targets: ReconciledTarget[] }[] = items.map((item) => ({ level: levelName(context.identifiers, item.ids), targets: [] }));
  const at = (target: number) => `at cutoff ${context.cutoffText}, target '${context.targets[target]}'`;
  try {
    const structure = buildHierarchy(context.identifiers, sorted, context.expectedLevels);
    context.targets.forEach((_, target) => {
      try {
        const base = sorted.map((s) => s.targets[target]);
        const reconciled = reconcile(
          structure,
          r.spec,
          {
            mean: base.map((b) => b.mean),
            sd: base.map((b) => sdFromQuantiles(r.taskLevels, b.quantiles)),
            ...(r.readsHistory && { history: base.map((b) => b.history!) }),
            ...(r.residualWindow !== null && { residuals: base.map((b) => b.residuals!) }),
          },
          context.levels,
        );
        sorted.forEach((s, k) => {
          const result = { mean: reconciled.mean[k], quantiles: reconciled.quantiles![k] };
          if (!allFinite(result.mean) || !result.quantiles.every(allFinite)) throw notFinite(context, s, at(target));
          out[order[k]].targets.push(result);
        });
      } catch (error) {
        throw asReconciliationRefusal(error, at(target));
      }
    });
  } catch (error) {
    throw asReconciliationRefusal(error, `at cutoff ${context.cutoffText}`);
  }
  return out;
}

function allFinite(values: Float64Array): boolean {
  for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i])) return false;
  return true;
}

/** Historical proportions divide by an anchor's history: a zero one leaves nothing to share out. */
function notFinite(context: CutoffContext, series: SeriesBase, where: string): EngineError {
  const named = context.identifiers.flatMap((name, i) => (series.ids[i] === null ? [] : [`${name}=${series.ids[i]}`])).join(', ');
  const message = `reconciliation ${where}: the reconciled forecast of ${named} is not finite (historical proportions over a history whose sum is zero?)`;
  return new EngineError('invalid_request', message, [{ root: 'request', path: ['reconciliation'], message }]);
}

/** A series' observed values as the history window reads them: its first step and its values. */
export interface SeriesValues {
  readonly start: number;
  readonly values: Float64Array;
}

/**
 * Every series' history on one common window up to the cutoff (NaN where a series has no value):
 * from the earliest start among them, or the last `context` steps when the query sets it.
 */
export function historyWindows(series: readonly SeriesValues[], cutoff: number, freq: Duration, context: number | null): Float64Array[] {
  let first = Infinity;
  for (const s of series) first = Math.min(first, s.start);
  if (context !== null) first = Math.max(first, addDuration(cutoff, freq, 1 - context));
  const length = stepsBetween(first, cutoff, freq) + 1;
  return series.map((s) => {
    const window = new Float64Array(length).fill(NaN);
    const offset = stepsBetween(first, s.start, freq);
    for (let t = Math.max(0, offset); t < length && t - offset < s.values.length; t++) window[t] = s.values[t - offset];
    return window;
  });
}
