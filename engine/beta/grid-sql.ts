import type { DuckDBConnection } from '@duckdb/node-api';
import { RequestError } from '../errors.ts';
import { sqlGridOrigin, sqlInterval, type Duration } from './duration.ts';
import { sqlNumber } from './duckdb.ts';
import type { Impute } from './query-schema.ts';

/**
 * Series on the frequency grid. Each series spans its first to its last step; the steps in
 * between that no row reached are added, and each target's gaps are filled by its impute rule.
 * Historical covariates are not imputed (they stay NULL where nothing was observed).
 */

export interface TargetSpec {
  /** Internal column name (y0, y1, ...). */
  column: string;
  name: string;
  impute: Impute | undefined;
}

/** Columns that name one series: its level and its identifiers (NULL where aggregated away). */
const keyMatch = (keys: string[], a: string, b: string) => keys.map((k) => `${a}.${k} IS NOT DISTINCT FROM ${b}.${k}`).join(' AND ');

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
          ELSE ${y}__pv + (${y}__nv - ${y}__pv) * (__k - ${y}__pk) / (${y}__nk - ${y}__pk) END`;
}

function neighbours(target: TargetSpec): string[] {
  const y = target.column;
  if (target.impute !== 'forward_fill' && target.impute !== 'linear') return [];
  return [
    `last_value(${y} IGNORE NULLS) OVER before_ AS ${y}__pv`,
    `first_value(${y} IGNORE NULLS) OVER after_ AS ${y}__nv`,
    `last_value(CASE WHEN ${y} IS NOT NULL THEN __k END IGNORE NULLS) OVER before_ AS ${y}__pk`,
    `first_value(CASE WHEN ${y} IS NOT NULL THEN __k END IGNORE NULLS) OVER after_ AS ${y}__nk`,
  ];
}

/**
 * `target` := `source` on a complete grid per series (keys), targets imputed, other value columns
 * (covariates) carried as they are.
 */
export async function fillGrid(c: DuckDBConnection, source: string, target: string, keys: string[], freq: Duration, targets: TargetSpec[], others: string[]): Promise<void> {
  const keyList = keys.join(', ');
  const values = [...targets.map((t) => t.column), ...others];
  const partition = `PARTITION BY ${keyList} ORDER BY t`;
  await c.run(`
    CREATE TEMP TABLE ${target} AS
    WITH spans AS (SELECT ${keyList}, min(t) AS t0, max(t) AS t1 FROM ${source} GROUP BY ${keyList}),
    grid AS (SELECT ${keyList}, g.t FROM spans, unnest(generate_series(t0, t1, ${sqlInterval(freq)})) AS g(t)),
    joined AS (
      SELECT ${keys.map((k) => `grid.${k}`).join(', ')}, grid.t, ${values.map((v) => `s.${v}`).join(', ')},
             row_number() OVER (PARTITION BY ${keys.map((k) => `grid.${k}`).join(', ')} ORDER BY grid.t) AS __k
      FROM grid LEFT JOIN ${source} s ON ${keyMatch(keys, 'grid', 's')} AND grid.t = s.t),
    near AS (
      SELECT *${targets.flatMap(neighbours).map((n) => `, ${n}`).join('')} FROM joined
      WINDOW before_ AS (${partition} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
             after_ AS (${partition} ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING))
    SELECT ${keyList}, t, ${targets.map((t) => `${imputed(t)} AS ${t.column}`).join(', ')}${others.map((o) => `, ${o}`).join('')}
    FROM near`);
}

/** Origin of the frequency grid and the bucket expression of a timestamp on it. */
export const bucketExpression = (timestamp: string, freq: Duration): string => `time_bucket(${sqlInterval(freq)}, ${timestamp}, ${sqlGridOrigin(freq)})`;

/**
 * Steps still without a value after imputation: gaps of a target without an impute rule, or a
 * series with no value at all. The message names up to five series.
 */
export async function checkNoGaps(c: DuckDBConnection, table: string, keys: string[], targets: TargetSpec[], describeSeries: (keys: (string | number | null)[]) => string, pathOf: (target: TargetSpec) => string): Promise<void> {
  for (const target of targets) {
    const y = target.column;
    const result = await c.runAndReadAll(`
      SELECT ${keys.join(', ')}, count(*) FILTER (WHERE ${y} IS NULL) AS gaps, count(*) AS steps,
             strftime(min(t) FILTER (WHERE ${y} IS NULL), '%Y-%m-%dT%H:%M:%SZ') AS first_gap, count(*) OVER () AS series_with_gaps
      FROM ${table} GROUP BY ${keys.join(', ')} HAVING count(*) FILTER (WHERE ${y} IS NULL) > 0
      ORDER BY ${keys.join(', ')} LIMIT 5`);
    const rows = result.getRowsJS() as (string | number | bigint | null)[][];
    if (rows.length === 0) continue;
    const total = Number(rows[0][keys.length + 4]);
    const listed = rows.map((row) => {
      const [gaps, steps, first] = row.slice(keys.length, keys.length + 3);
      const id = describeSeries(row.slice(0, keys.length).map((v) => (typeof v === 'bigint' ? Number(v) : v)));
      return gaps === steps ? `${id} (no value at all)` : `${id} (${gaps} missing step(s), the first at ${first})`;
    });
    const more = total > rows.length ? ` and ${total - rows.length} more` : '';
    const message =
      target.impute === undefined
        ? `target '${target.name}' has gaps on the frequency grid and no impute rule: ${listed.join('; ')}${more}. Add "impute" to its role ({"const": 0}, "zero", "forward_fill" or "linear")`
        : `target '${target.name}' has series with no value to impute from: ${listed.join('; ')}${more}`;
    throw new RequestError(422, 'invalid_request', message, [{ path: pathOf(target), message }]);
  }
}
