import type { DuckDBConnection } from '@duckdb/node-api';
import { refuseField, type FieldPath } from '../errors.ts';
import { FIXED_ORIGIN_MS, isoTimestamp, sqlGridOrigin, sqlInterval, type Duration } from './duration.ts';
import { sqlNumber } from '../sql.ts';
import type { Impute } from './query-fields.ts';

/**
 * Series on the frequency grid, in SQL. A step is a whole number `k`, the k-th bucket of the grid
 * from its origin (duration.ts), so series are keyed by two integers (series id, k), their names in
 * a small dictionary table: small hash tables bound the schema logic's memory. Each series spans its
 * first to its last step, missing steps added and each target's gaps filled by its impute rule;
 * historical covariates stay NULL where nothing was observed.
 */

export interface TargetSpec {
  /** Internal column name (y0, y1, ...). */
  column: string;
  name: string;
  impute: Impute | undefined;
}

/** The step index of a UTC TIMESTAMP expression. */
export function stepIndexSql(timestamp: string, freq: Duration): string {
  if (freq.kind === 'fixed') return `CAST(floor((epoch_ms(${timestamp}) - ${FIXED_ORIGIN_MS}) / ${freq.ms}) AS BIGINT)`;
  return `CAST(floor(((year(${timestamp}) - 2000) * 12 + month(${timestamp}) - 1) / ${freq.months}) AS BIGINT)`;
}

/** The start of step `k` as a TIMESTAMP expression. */
export function stepTimeSql(k: string, freq: Duration): string {
  if (freq.kind === 'fixed') return `make_timestamp((${FIXED_ORIGIN_MS} + ${k} * ${freq.ms}) * 1000)`;
  return `(TIMESTAMP '2000-01-01 00:00:00' + to_months(CAST(${k} * ${freq.months} AS INTEGER)))`;
}

/** The start of step `k`, epoch milliseconds. */
export function stepTime(k: number, freq: Duration): number {
  return freq.kind === 'fixed' ? FIXED_ORIGIN_MS + k * freq.ms : Date.UTC(2000, k * freq.months, 1);
}

/** Bucket start of a timestamp on the grid of `freq`, for joins across grids. */
export const bucketExpression = (timestamp: string, freq: Duration): string => `time_bucket(${sqlInterval(freq)}, ${timestamp}, ${sqlGridOrigin(freq)})`;

function imputed(target: TargetSpec): string {
  const y = target.column;
  const rule = target.impute;
  if (rule === undefined) return y;
  if (typeof rule === 'object') return `coalesce(${y}, ${sqlNumber(rule.const)})`;
  if (rule === 'zero') return `coalesce(${y}, 0)`;
  // Forward fill carries the last value on; before the first value there is none, so the first
  // value is used. Linear interpolation is by steps; at either end it holds the nearest value.
  if (rule === 'forward_fill') return `coalesce(${y}, ${y}__pv, ${y}__nv)`;
  return `CASE WHEN ${y} IS NOT NULL THEN ${y} WHEN ${y}__pv IS NULL THEN ${y}__nv WHEN ${y}__nv IS NULL THEN ${y}__pv
          ELSE ${y}__pv + (${y}__nv - ${y}__pv) * (k - ${y}__pk) / (${y}__nk - ${y}__pk) END`;
}

function neighbours(target: TargetSpec): string[] {
  const y = target.column;
  if (target.impute !== 'forward_fill' && target.impute !== 'linear') return [];
  return [
    `last_value(${y} IGNORE NULLS) OVER before_ AS ${y}__pv`,
    `first_value(${y} IGNORE NULLS) OVER after_ AS ${y}__nv`,
    `last_value(CASE WHEN ${y} IS NOT NULL THEN k END IGNORE NULLS) OVER before_ AS ${y}__pk`,
    `first_value(CASE WHEN ${y} IS NOT NULL THEN k END IGNORE NULLS) OVER after_ AS ${y}__nk`,
  ];
}

/** True when every series of `table` has every step of its span and every target a value. */
export async function isComplete(c: DuckDBConnection, table: string, targets: TargetSpec[]): Promise<boolean> {
  const missing = targets.map((t) => ` OR count(${t.column}) < count(*)`).join('');
  const [[incomplete]] = (
    await c.runAndReadAll(`SELECT count(*) FROM (SELECT sid FROM ${table} GROUP BY sid HAVING count(*) < max(k) - min(k) + 1${missing})`)
  ).getRowsJS() as bigint[][];
  return incomplete === 0n;
}

/**
 * `target` := `source` (sid, k, values) on a complete grid per series, targets imputed, other
 * value columns (covariates) carried as they are.
 */
export async function fillGrid(c: DuckDBConnection, source: string, target: string, targets: TargetSpec[], others: string[]): Promise<void> {
  const values = [...targets.map((t) => t.column), ...others];
  const partition = 'PARTITION BY sid ORDER BY k';
  await c.run(`
    CREATE TEMP TABLE ${target} AS
    WITH spans AS (SELECT sid, min(k) AS k0, max(k) AS k1 FROM ${source} GROUP BY sid),
    grid AS (SELECT sid, g.k FROM spans, unnest(range(k0, k1 + 1)) AS g(k)),
    joined AS (SELECT grid.sid, grid.k, ${values.map((v) => `s.${v}`).join(', ')} FROM grid LEFT JOIN ${source} s USING (sid, k)),
    near AS (
      SELECT *${targets
        .flatMap(neighbours)
        .map((n) => `, ${n}`)
        .join('')} FROM joined
      WINDOW before_ AS (${partition} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
             after_ AS (${partition} ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING))
    SELECT sid, k, ${targets.map((t) => `${imputed(t)} AS ${t.column}`).join(', ')}${others.map((o) => `, ${o}`).join('')}
    FROM near`);
}

/**
 * Steps still without a value after imputation: gaps of a target without an impute rule, or a
 * series with no value at all. The message names up to five series.
 */
export async function checkNoGaps(
  c: DuckDBConnection,
  table: string,
  freq: Duration,
  targets: TargetSpec[],
  describeSeries: (sid: number) => string,
  pathOf: (target: TargetSpec) => FieldPath,
): Promise<void> {
  for (const target of targets) {
    const y = target.column;
    const result = await c.runAndReadAll(`
      SELECT sid, count(*) FILTER (WHERE ${y} IS NULL) AS gaps, count(*) AS steps, min(k) FILTER (WHERE ${y} IS NULL) AS first_gap, count(*) OVER () AS series_with_gaps
      FROM ${table} GROUP BY sid HAVING count(*) FILTER (WHERE ${y} IS NULL) > 0 ORDER BY sid LIMIT 5`);
    const rows = (result.getRowsJS() as (number | bigint)[][]).map((row) => row.map(Number));
    if (rows.length === 0) continue;
    const listed = rows.map(([sid, gaps, steps, first]) =>
      gaps === steps
        ? `${describeSeries(sid)} (no value at all)`
        : `${describeSeries(sid)} (${gaps} missing step(s), the first at ${isoTimestamp(stepTime(first, freq))})`,
    );
    const total = rows[0][4];
    const more = total > rows.length ? ` and ${total - rows.length} more` : '';
    const message =
      target.impute === undefined
        ? `target '${target.name}' has gaps on the frequency grid and no impute rule: ${listed.join('; ')}${more}. Add "impute" to its role ({"const": 0}, "zero", "forward_fill" or "linear")`
        : `target '${target.name}' has series with no value to impute from: ${listed.join('; ')}${more}`;
    throw refuseField({ root: 'request', path: pathOf(target) }, message);
  }
}
