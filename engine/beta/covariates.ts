import type { DuckDBConnection } from '@duckdb/node-api';
import { checkIdentifiers, checkSourceColumns, checkTimes, timeExpression, valueExpression } from './columns.ts';
import { duration, type Duration } from './duration.ts';
import { exactMean, sumScales } from './exact-sums.ts';
import { sqlIdent } from '../sql.ts';
import { bucketExpression, stepTimeSql } from './grid-sql.ts';
import { summariseRoles, type BetaCovariate } from './query-fields.ts';
import type { TableSource } from './table-sources.ts';

/**
 * Covariate sources with their own schema (version 0.3), joined to the base series `on` pairs of
 * base/attached columns. A time-varying covariate is placed on the coarser of the two grids and
 * averaged there, so a monthly price repeats on every day of its month and hourly weather is a
 * daily mean for daily sales. Attached identifiers not used in `on` are averaged over, so every
 * base step matches at most one covariate row.
 */

const APPROX_MONTH_MS = 30.436875 * 24 * 3600 * 1000;
const approxMs = (d: Duration) => (d.kind === 'fixed' ? d.ms : d.months * APPROX_MONTH_MS);

export interface BaseLayout {
  freq: Duration;
  timeColumn: string;
  /** Identifier column name -> its internal column in the base table. */
  identifierColumns: Map<string, string>;
}

/**
 * Joins every covariate onto `baseTable` (sid, k, ...; names in `beta_ids`) as `target`; returns
 * the covariate names, in column order c0, c1, ... (none, and no table, without covariates).
 */
export async function joinCovariates(
  c: DuckDBConnection,
  covariates: BetaCovariate[],
  sources: TableSource[],
  baseTable: string,
  target: string,
  base: BaseLayout,
): Promise<string[]> {
  const names: string[] = [];
  const selects: string[] = [];
  const joins: string[] = [];
  for (const [i, cov] of covariates.entries()) {
    const source = sources[i];
    const rolesPath = ['covariates', i, 'schema', 'columns'];
    const types = checkSourceColumns(await source.describe(c), cov.schema.columns, source, rolesPath);
    const roles = summariseRoles(cov.schema.columns);
    const relation = `beta_cov${i}_src`;
    const joinColumns = cov.on.map((pair) => pair.attached);
    await source.attach(c, relation, [...new Set([...joinColumns, ...roles.historical])]);

    const time = roles.time[0];
    const grid = time ? [base.freq, duration(time[1].frequency)].sort((a, b) => approxMs(b) - approxMs(a))[0] : null;
    if (time) await checkTimes(c, relation, time[0], types.get(time[0])!, source, [...rolesPath, time[0]]);
    const attachedIds = joinColumns.filter((name) => name !== time?.[0]);
    await checkIdentifiers(c, relation, attachedIds, source, rolesPath);

    const keys = cov.on.map((pair, j) =>
      pair.attached === time?.[0]
        ? `${bucketExpression(timeExpression(pair.attached, types.get(pair.attached)!), grid!)} AS k${j}`
        : `CAST(${sqlIdent(pair.attached)} AS VARCHAR) AS k${j}`,
    );
    // The mean of a step's (or an identifier's) rows adds them exactly (exact-sums.ts), so that it
    // does not depend on thread order. A group holds at most all of the source's rows, which the
    // scales' query counts: counting the largest group would cost a grouping as large as this one,
    // for a few more bits of range kept exactly.
    const read = roles.historical.map((name, j) => `${valueExpression(name)} AS __v${j}`);
    const scales = await sumScales(c, relation, roles.historical.map(sqlIdent));
    const values = roles.historical.map((name, j) => `${exactMean(`__v${j}`, scales.get(sqlIdent(name)) ?? null)} AS v${j}`);
    const table = `beta_cov${i}`;
    await c.run(
      `CREATE TEMP TABLE ${table} AS SELECT ${keys.map((_, j) => `k${j}`).join(', ')}, ${values.join(', ')} FROM (SELECT ${[...keys, ...read].join(', ')} FROM ${relation}) GROUP BY ALL`,
    );

    const on = cov.on.map((pair, j) => {
      const baseSide = pair.base === base.timeColumn ? bucketExpression(stepTimeSql('b.k', base.freq), grid!) : `d.${base.identifierColumns.get(pair.base)}`;
      return `${baseSide} = ${table}.k${j}`;
    });
    joins.push(`LEFT JOIN ${table} ON ${on.join(' AND ')}`);
    roles.historical.forEach((name, j) => {
      selects.push(`${table}.v${j} AS c${names.length}`);
      names.push(name);
    });
  }
  if (covariates.length === 0) return names;
  // Identifier values come from the series dictionary; the step's time from its index.
  await c.run(
    `CREATE TEMP TABLE ${target} AS SELECT b.*${selects.map((s) => `, ${s}`).join('')} FROM ${baseTable} b JOIN beta_ids d USING (sid) ${joins.join(' ')}`,
  );
  return names;
}
