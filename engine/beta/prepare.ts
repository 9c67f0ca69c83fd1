import type { DuckDBConnection } from '@duckdb/node-api';
import { RequestError } from '../errors.ts';
import { checkIdentifiers, checkSourceColumns, checkTimes, timeExpression, valueExpression } from './columns.ts';
import { joinCovariates } from './covariates.ts';
import type { Duration } from './duration.ts';
import { sqlIdent, sqlString } from './duckdb.ts';
import { bucketExpression, checkNoGaps, fillGrid, type TargetSpec } from './grid-sql.ts';
import { hierarchyLevels, selectLevels, type Level } from './hierarchy.ts';
import { inputColumns, type Aggregate, type BetaQuery } from './query-schema.ts';
import { queryFrequency, summariseRoles } from './query-rules.ts';
import type { BetaSources } from './sources.ts';
import { QUERY_PATH } from './validation.ts';

/**
 * The schema logic, as SQL in DuckDB: rows are bucketed onto the frequency grid (duplicates
 * combined by the target's aggregate), each series completed and imputed, covariates joined,
 * the hierarchies rolled up (GROUPING SETS) and imputed again, and the selected levels read out
 * as one array per series and target.
 */

export interface PreparedSeries {
  level: Level;
  /** One entry per identifier column; null where this level aggregates it away. */
  ids: (string | null)[];
  /** First step (epoch ms, UTC). */
  start: number;
  length: number;
  /** One array per target, in `PreparedData.targets` order. */
  targets: Float64Array[];
  /** One array per covariate, in `PreparedData.covariates` order; NaN where unknown. */
  covariates: Float64Array[];
}

export interface PreparedData {
  freq: Duration;
  identifiers: string[];
  targets: string[];
  covariates: string[];
  levels: Level[];
  series: PreparedSeries[];
}

/** Within one step: how rows combine. */
const BUCKET: Record<Aggregate, (v: string) => string> = {
  sum: (v) => `sum(${v})`,
  mean: (v) => `avg(${v})`,
  min: (v) => `min(${v})`,
  max: (v) => `max(${v})`,
  median: (v) => `median(${v})`,
  first: (v) => `arg_min(${v}, __t) FILTER (WHERE ${v} IS NOT NULL)`,
  last: (v) => `arg_max(${v}, __t) FILTER (WHERE ${v} IS NOT NULL)`,
  count: (v) => `count(${v})`,
};

/** Across the children of a roll-up: first and last order rows in time, not series, and counts add up. */
const ROLLUP: Record<Aggregate, (v: string) => string> = {
  sum: (v) => `sum(${v})`,
  mean: (v) => `avg(${v})`,
  min: (v) => `min(${v})`,
  max: (v) => `max(${v})`,
  median: (v) => `median(${v})`,
  first: (v) => `sum(${v})`,
  last: (v) => `sum(${v})`,
  count: (v) => `sum(${v})`,
};

export async function prepareSeries(c: DuckDBConnection, query: BetaQuery, sources: BetaSources): Promise<PreparedData> {
  const columns = inputColumns(query);
  const rolesPath = `${QUERY_PATH}.input.${query.input.columns ? 'columns' : 'schema'}`;
  const roles = summariseRoles(columns);
  const freq = queryFrequency(columns);
  const [timeColumn] = roles.time[0];
  const source = sources.input;

  const types = checkSourceColumns(await source.describe(c), columns, source, rolesPath);
  await source.attach(c, 'beta_input', Object.keys(columns));
  await checkTimes(c, 'beta_input', timeColumn, types.get(timeColumn)!, source, `${rolesPath}.${timeColumn}`);
  await checkIdentifiers(c, 'beta_input', roles.identifiers, source, rolesPath);

  const ids = roles.identifiers.map((name, i) => ({ name, column: `i${i}` }));
  const targets: (TargetSpec & { aggregate: Aggregate })[] = roles.targets.map((name, i) => {
    const role = columns[name] as Extract<(typeof columns)[string], { kind: 'target' }>;
    return { name, column: `y${i}`, impute: role.impute, aggregate: role.aggregate };
  });
  const historical = roles.historical.map((name, i) => ({ name, column: `h${i}` }));
  const selection = selectLevels(hierarchyLevels(roles.identifiers, query.input.hierarchies), query.selector);

  // Values the selector asks for are filtered on the raw rows: every selected level keeps those
  // identifiers, so their roll-ups are whole and no other series is prepared or checked.
  const filters = [...selection.values].map(([name, values]) => `CAST(${sqlIdent(name)} AS VARCHAR) IN (${values.map(sqlString).join(', ')})`);
  await c.run(`
    CREATE TEMP TABLE beta_bucketed AS
    SELECT 0 AS lvl${ids.map((id) => `, ${id.column}`).join('')}, ${bucketExpression('__t', freq)} AS t,
           ${[...targets.map((t) => `CAST(${BUCKET[t.aggregate](`__${t.column}`)} AS DOUBLE) AS ${t.column}`), ...historical.map((h) => `avg(__${h.column}) AS ${h.column}`)].join(', ')}
    FROM (SELECT ${[
      ...ids.map((id) => `CAST(${sqlIdent(id.name)} AS VARCHAR) AS ${id.column}`),
      `${timeExpression(timeColumn, types.get(timeColumn)!)} AS __t`,
      ...targets.map((t) => `${valueExpression(t.name)} AS __${t.column}`),
      ...historical.map((h) => `${valueExpression(h.name)} AS __${h.column}`),
    ].join(', ')}
          FROM beta_input ${filters.length ? `WHERE ${filters.join(' AND ')}` : ''})
    GROUP BY ALL`);
  const [[rows]] = (await c.runAndReadAll('SELECT count(*) FROM beta_bucketed')).getRowsJS() as bigint[][];
  if (rows === 0n) {
    const message = `no rows of ${source.label} match the selector's values`;
    throw new RequestError(422, 'invalid_request', message, [{ path: `${QUERY_PATH}.selector`, message }]);
  }

  const keys = ['lvl', ...ids.map((id) => id.column)];
  const describeSeries = (values: (string | number | null)[]) =>
    ids.flatMap((id, i) => (values[i + 1] === null ? [] : [`${id.name}=${values[i + 1]}`])).join(', ') || 'the total';
  const gapPath = (t: TargetSpec) => `${rolesPath}.${t.name}${t.impute ? '' : '.impute'}`;

  await fillGrid(c, 'beta_bucketed', 'beta_filled', keys, freq, targets, historical.map((h) => h.column));
  await checkNoGaps(c, 'beta_filled', keys, targets, describeSeries, gapPath);
  const covariateNames = await joinCovariates(c, query.covariates ?? [], sources.covariates, 'beta_filled', 'beta_base', {
    freq,
    timeColumn,
    identifierColumns: new Map(ids.map((id) => [id.name, id.column])),
  });
  const valueColumns = [...historical.map((h) => h.column), ...covariateNames.map((_, i) => `c${i}`)];

  const parts: string[] = [];
  if (selection.levels.some((l) => l.mask === 0)) parts.push('SELECT * FROM beta_base');
  const rollups = selection.levels.filter((l) => l.mask !== 0);
  if (rollups.length > 0) {
    const sets = rollups.map((l) => `(${[...l.kept.map((name) => ids.find((id) => id.name === name)!.column), 't'].join(', ')})`);
    // GROUPING() and the column itself are only allowed for columns of some grouping set; an
    // identifier no selected level keeps is a constant NULL with its bit always set.
    const grouped = ids.map((id) => rollups.some((l) => l.kept.includes(id.name)));
    const bit = (i: number) => 1 << (ids.length - 1 - i);
    const lvl = ids.map((id, i) => (grouped[i] ? `GROUPING(${id.column}) * ${bit(i)}` : `${bit(i)}`)).join(' + ');
    const idColumns = ids.map((id, i) => (grouped[i] ? id.column : `CAST(NULL AS VARCHAR) AS ${id.column}`));
    await c.run(`
      CREATE TEMP TABLE beta_rolled AS
      SELECT CAST(${lvl} AS INTEGER) AS lvl${idColumns.map((col) => `, ${col}`).join('')}, t,
             ${[...targets.map((t) => `CAST(${ROLLUP[t.aggregate](t.column)} AS DOUBLE) AS ${t.column}`), ...valueColumns.map((v) => `avg(${v}) AS ${v}`)].join(', ')}
      FROM beta_base GROUP BY GROUPING SETS (${sets.join(', ')})`);
    // A roll-up spans its children's union of steps; where no child has a step, the target's
    // impute rule fills it (or the gap is reported), as for the base series.
    await fillGrid(c, 'beta_rolled', 'beta_rollups', keys, freq, targets, valueColumns);
    await checkNoGaps(c, 'beta_rollups', keys, targets, describeSeries, gapPath);
    parts.push('SELECT * FROM beta_rollups');
  }
  await c.run(`CREATE TEMP VIEW beta_series AS ${parts.join(' UNION ALL BY NAME ')}`);

  const order = `CASE lvl ${selection.levels.map((l, i) => `WHEN ${l.mask} THEN ${i}`).join(' ')} END${ids.map((id) => `, ${id.column} NULLS FIRST`).join('')}`;
  const series = await readSeries(c, order, keys, targets.length, valueColumns, selection.levels, ids.length);
  return { freq, identifiers: roles.identifiers, targets: roles.targets, covariates: [...roles.historical, ...covariateNames], levels: selection.levels, series };
}

/** The prepared series, one typed array per target and covariate, read a chunk at a time. */
async function readSeries(c: DuckDBConnection, order: string, keys: string[], targetCount: number, valueColumns: string[], levels: Level[], idCount: number): Promise<PreparedSeries[]> {
  const byMask = new Map(levels.map((l) => [l.mask, l]));
  const heads = await c.runAndReadAll(`SELECT ${keys.join(', ')}, epoch_ms(min(t)) AS start, count(*) AS n FROM beta_series GROUP BY ${keys.join(", ")} ORDER BY ${order}`);
  const series: PreparedSeries[] = (heads.getRowsJS() as (string | number | bigint | null)[][]).map((row) => {
    const length = Number(row[idCount + 2]);
    return {
      level: byMask.get(Number(row[0]))!,
      ids: row.slice(1, idCount + 1) as (string | null)[],
      start: Number(row[idCount + 1]),
      length,
      targets: Array.from({ length: targetCount }, () => new Float64Array(length)),
      covariates: valueColumns.map(() => new Float64Array(length)),
    };
  });

  const targetColumns = Array.from({ length: targetCount }, (_, i) => `y${i}`);
  const result = await c.stream(`SELECT ${[...targetColumns, ...valueColumns].join(', ')} FROM beta_series ORDER BY ${order}, t`);
  let s = 0;
  let offset = 0;
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const columns = chunk.getColumns() as (number | null)[][];
    for (let r = 0; r < chunk.rowCount; r++) {
      while (offset === series[s].length) {
        s++;
        offset = 0;
      }
      const cur = series[s];
      for (let j = 0; j < targetCount; j++) cur.targets[j][offset] = columns[j][r] as number;
      for (let j = 0; j < valueColumns.length; j++) cur.covariates[j][offset] = columns[targetCount + j][r] ?? NaN;
      offset++;
    }
  }
  return series;
}
