import { EngineError, refuseField } from '../errors.ts';
import { reconciliationSpec, type ReconciliationSpec } from '../reconciliation/reconcile.ts';
import { ReconciliationError } from '../reconciliation/reconciliation-error.ts';
import { DEFAULT_RESIDUAL_WINDOW, type BetaQuery } from './query-fields.ts';

/**
 * What a beta query's `reconciliation` means for the pipeline, worked out once: the algebra's
 * spec, whether one-step residuals or the history are read, and the quantile levels the model
 * forecasts. The normal approximation reads a base spread from a symmetric pair of quantiles
 * (docs/decisions/050-probabilistic-reconciliation.md), so a query without one has mirrors
 * forecast beside its own levels; the answer holds only the levels asked for.
 */

export interface BetaReconciliation {
  readonly spec: ReconciliationSpec;
  /** One-step residuals per series and cutoff (wls_var, mint_shrink, mint_cov); null when the method reads none. */
  readonly residualWindow: number | null;
  /** Whether the method reads each series' history up to the cutoff (historical proportions). */
  readonly readsHistory: boolean;
  /** The levels the model forecasts: the query's, then any mirror added to read a spread. */
  readonly taskLevels: readonly number[];
}

const RESIDUAL_ESTIMATORS: readonly string[] = ['wls_var', 'mint_shrink', 'mint_cov'];

/** The query's reconciliation, or null without one; `levels` are the quantile levels it asks for. */
export function resolveReconciliation(query: BetaQuery, levels: readonly number[]): BetaReconciliation | null {
  const input = query.reconciliation;
  if (!input) return null;
  const spec = reconciliationSpec(input);
  const readsResiduals = spec.method === 'min_trace' && RESIDUAL_ESTIMATORS.includes(spec.estimator);
  return {
    spec,
    residualWindow: readsResiduals ? (input.residual_window ?? DEFAULT_RESIDUAL_WINDOW) : null,
    readsHistory: (spec.method === 'top_down' || spec.method === 'middle_out') && spec.proportions !== 'forecast_proportions',
    taskLevels: withSymmetricPair(levels),
  };
}

const hasPair = (levels: readonly number[]) => levels.some((tau) => tau < 0.5 && levels.some((other) => Math.abs(other + tau - 1) < 1e-9));
/** 1 - tau, rounded so that 1 - 0.3 is 0.7. */
const mirror = (tau: number) => Number((1 - tau).toFixed(12));

/** The levels as they are when they hold a symmetric pair; else with each level's mirror; else with 0.1 and 0.9. */
export function withSymmetricPair(levels: readonly number[]): readonly number[] {
  if (hasPair(levels)) return levels;
  const mirrors = levels.filter((tau) => tau !== 0.5).map(mirror);
  const added = mirrors.length > 0 ? mirrors : [0.1, 0.9].filter((tau) => !levels.includes(tau));
  return [...levels, ...added.filter((tau, i) => !levels.includes(tau) && added.indexOf(tau) === i)];
}

/** A level's name in the answer: the identifiers it keeps, in the query's order, joined by `/`. */
export const levelName = (identifiers: readonly string[], ids: readonly (string | null)[]): string =>
  identifiers.filter((_, i) => ids[i] !== null).join('/') || '(total)';

/**
 * A refusal of the algebra as the engine's error, at its option inside `reconciliation`: a
 * client can fix every code but invalid_input, which is a fault of ours.
 */
export function asReconciliationRefusal(error: unknown, where: string): unknown {
  if (!(error instanceof ReconciliationError)) return error;
  const message = `reconciliation ${where}: ${error.message}`;
  if (error.code === 'invalid_input') return new EngineError('forecast_failed', message);
  return refuseField({ root: 'request', path: ['reconciliation', ...error.path] }, message);
}
