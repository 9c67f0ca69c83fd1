import type { DuckDBConnection } from '@duckdb/node-api';
import type { TargetSpec } from './grid-sql.ts';
import type { Level } from './hierarchy.ts';
import type { Aggregate } from './query-fields.ts';
import { exactMean, exactSum, sumScales, type SumScale } from './exact-sums.ts';

/**
 * Hierarchy roll-ups in one GROUPING SETS query over the prepared base series: each selected
 * level groups by the identifiers it keeps and the step. Targets combine by their aggregate;
 * covariates by their mean. The roll-up series are numbered after the base series, in the
 * response's order, into `beta_rollup_ids` (level, identifier values) and `beta_rolled_k`
 * (sid, k, values).
 */

/**
 * Across the children of a roll-up: first and last order rows in time, not series, and counts add
 * up. Sums and means add the children exactly (exact-sums.ts), so that a job and the synchronous
 * endpoint roll the same data up to the same bits; minimum, maximum and median depend on no order.
 */
const ROLLUP: Record<Aggregate, (v: string, scale: SumScale) => string> = {
  sum: exactSum,
  mean: exactMean,
  min: (v) => `min(${v})`,
  max: (v) => `max(${v})`,
  median: (v) => `median(${v})`,
  first: exactSum,
  last: exactSum,
  count: exactSum,
};

const ADDS = new Set<Aggregate>(['sum', 'mean', 'first', 'last', 'count']);

/** The targets whose roll-up is the sum of the children: the only ones reconciliation, which makes each parent that sum, may take. */
export const ROLLS_UP_AS_SUM: ReadonlySet<Aggregate> = new Set(['sum', 'first', 'last', 'count']);

export interface RollUpSpec {
  /** The base series table (sid, k, values); names in `beta_ids`. */
  base: string;
  ids: { name: string; column: string }[];
  targets: (TargetSpec & { aggregate: Aggregate })[];
  /** Covariate columns carried along. */
  valueColumns: string[];
  /** The selected roll-up levels (never the base). */
  levels: Level[];
  /** The first sid of the roll-up series (the number of base series). */
  firstSid: number;
  /** ORDER BY of the response (level, then identifiers). */
  order: string;
}

export async function rollUp(c: DuckDBConnection, spec: RollUpSpec): Promise<void> {
  const { ids, targets, valueColumns } = spec;
  const idList = ids.map((id) => id.column);
  const sets = spec.levels.map((l) => `(${[...l.kept.map((name) => ids.find((id) => id.name === name)!.column), 'k'].join(', ')})`);
  // GROUPING() and the column itself are only allowed for columns of some grouping set; an
  // identifier no selected level keeps is a constant NULL with its bit always set.
  const grouped = ids.map((id) => spec.levels.some((l) => l.kept.includes(id.name)));
  const bit = (i: number) => 1 << (ids.length - 1 - i);
  const lvl = ids.map((id, i) => (grouped[i] ? `GROUPING(${id.column}) * ${bit(i)}` : `${bit(i)}`)).join(' + ');
  const idColumns = ids.map((id, i) => (grouped[i] ? id.column : `CAST(NULL AS VARCHAR) AS ${id.column}`));
  // A roll-up's children are base series, at most one per step each: `firstSid` rows a group.
  const added = [...targets.filter((t) => ADDS.has(t.aggregate)).map((t) => t.column), ...valueColumns];
  const scales = await sumScales(c, spec.base, added, spec.firstSid);
  const values = [
    ...targets.map((t) => `CAST(${ROLLUP[t.aggregate](t.column, scales.get(t.column) ?? null)} AS DOUBLE) AS ${t.column}`),
    ...valueColumns.map((v) => `${exactMean(v, scales.get(v)!)} AS ${v}`),
  ];
  await c.run(`
    CREATE TEMP TABLE beta_rolled AS
    SELECT CAST(${lvl} AS INTEGER) AS lvl, ${idColumns.join(', ')}, k, ${values.join(', ')}
    FROM ${spec.base} JOIN beta_ids USING (sid) GROUP BY GROUPING SETS (${sets.join(', ')})`);
  await c.run(`
    CREATE TEMP TABLE beta_rollup_ids AS
    SELECT CAST(${spec.firstSid} + row_number() OVER (ORDER BY ${spec.order}) - 1 AS INTEGER) AS sid, lvl, ${idList.join(', ')}
    FROM (SELECT DISTINCT lvl, ${idList.join(', ')} FROM beta_rolled)`);
  await c.run(`
    CREATE TEMP TABLE beta_rolled_k AS
    SELECT d.sid, r.k, ${[...targets.map((t) => t.column), ...valueColumns].map((v) => `r.${v}`).join(', ')}
    FROM beta_rolled r JOIN beta_rollup_ids d ON r.lvl = d.lvl${idList.map((col) => ` AND r.${col} IS NOT DISTINCT FROM d.${col}`).join('')}`);
}
