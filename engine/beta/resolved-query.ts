import { quantileLevels } from '../tasks.ts';
import { duration, wholeSteps, type Duration } from './duration.ts';
import { inputColumns, summariseRoles, type BetaQuery, type Columns, type RoleSummary } from './query-fields.ts';
import { resolveReconciliation, type BetaReconciliation } from './reconciliation-settings.ts';

/**
 * A beta query that passed validation, with what the rest of the pipeline reads from it worked
 * out once: its column roles, the time column and its frequency, and its durations in steps.
 * Made right after the query is parsed (the route, or a worker reading a job's stored query: a
 * job stores the query as sent and is resolved again on each read).
 */
export interface ResolvedBetaQuery {
  /** The query as parsed. */
  readonly parsed: BetaQuery;
  /** The input's column roles, wherever the caller put them (input.columns or input.schema). */
  readonly columns: Columns;
  /** Where those roles are in the query, for error paths: `['input', 'columns']` or `['input', 'schema']`. */
  readonly rolesPath: ['input', 'columns' | 'schema'];
  /** The columns of each role, in the order the query names them. */
  readonly roles: RoleSummary;
  /** The time column, and its frequency: the series' step. */
  readonly timeColumn: string;
  readonly freq: Duration;
  /** prediction_length in steps. */
  readonly horizon: number;
  /** context in steps; null for all of the history. */
  readonly context: number | null;
  /** The quantile levels asked for (the default when none). */
  readonly levels: readonly number[];
  /** What `reconciliation` asks for; null without it. */
  readonly reconciliation: BetaReconciliation | null;
}

/** Resolves a query the BetaQuery schema accepted (its rules guarantee one time column and whole steps). */
export function resolveBetaQuery(parsed: BetaQuery): ResolvedBetaQuery {
  const columns = inputColumns(parsed);
  const roles = summariseRoles(columns);
  const [timeColumn, timeRole] = roles.time[0];
  const freq = duration(timeRole.frequency);
  const levels = quantileLevels(parsed.quantiles);
  return {
    parsed,
    columns,
    rolesPath: ['input', parsed.input.columns ? 'columns' : 'schema'],
    roles,
    timeColumn,
    freq,
    horizon: wholeSteps(duration(parsed.prediction_length), freq)!,
    context: parsed.context ? wholeSteps(duration(parsed.context), freq)! : null,
    levels,
    reconciliation: resolveReconciliation(parsed, levels),
  };
}
