import type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';
import { refuseField } from '../errors.ts';
import { ORDERED, bucketIntoTable, bucketScales, passesFor, streamCompleteSeries, type BucketSpec, type SeriesArrays } from './buckets.ts';
import { checkIdentifiers, checkSourceColumns, checkTimes, timeExpression } from './columns.ts';
import { joinCovariates } from './covariates.ts';
import type { Duration } from './duration.ts';
import { sqlIdent, sqlString } from '../sql.ts';
import { checkNoGaps, fillGrid, isComplete, stepTime, type TargetSpec } from './grid-sql.ts';
import { hierarchyLevels, selectLevels, type Level } from './hierarchy.ts';
import type { Aggregate } from './query-fields.ts';
import type { ResolvedBetaQuery } from './resolved-query.ts';
import { rollUp } from './rollup.ts';
import type { BetaSources } from './table-sources.ts';

/**
 * The schema logic, as SQL in DuckDB: rows are bucketed onto the frequency grid (duplicates
 * combined by the target's aggregate), each series completed and imputed, covariates joined,
 * the hierarchies rolled up (GROUPING SETS) and imputed again, and the selected levels read out
 * as one array per series and target.
 *
 * Series are numbered (`sid`) in small dictionary tables (`beta_ids`, `beta_rollup_ids`) that
 * hold their level and identifier values; the large tables hold only (sid, step k, values).
 */

/**
 * One prepared series: its level, its identifier values (null where the level aggregates one
 * away), its first step (epoch ms, UTC), and one array per target and covariate (NaN where a
 * covariate is unknown), in `PreparedData` order.
 */
export type PreparedSeries = SeriesArrays;

export interface PreparedData {
  freq: Duration;
  identifiers: string[];
  targets: string[];
  covariates: string[];
  levels: Level[];
  series: PreparedSeries[];
}

/** What the schema logic leaves in the connection: the series' tables, read out by `seriesHeadsSql` and `seriesValuesSql`. */
export interface PreparedTables extends Omit<PreparedData, 'series'> {
  /** `sid, k0, n, lvl, <identifier values...>` per series, in series order. */
  headsSql: string;
  /** `sid, k (DOUBLE), <targets...>, <covariates...>` per observed step, in no order. */
  valuesSql: string;
}

/** The input's columns against the query's roles: cheap (a file's footer or schema), so checked before a job exists. */
export async function checkInputColumns(c: DuckDBConnection, query: ResolvedBetaQuery, sources: BetaSources): Promise<void> {
  checkSourceColumns(await sources.input.describe(c), query.columns, sources.input, query.rolesPath);
}

/** The schema logic with every series read into memory (the synchronous endpoint). */
export async function prepareSeries(c: DuckDBConnection, query: ResolvedBetaQuery, sources: BetaSources): Promise<PreparedData> {
  const prepared = await schemaLogic(c, query, sources, true);
  if ('series' in prepared) return prepared;
  const { headsSql: _heads, valuesSql: _values, ...names } = prepared;
  return { ...names, series: await readSeries(c, prepared) };
}

/**
 * The schema logic leaving the series in DuckDB tables (beta jobs), to be written out a chunk at
 * a time rather than held in memory.
 */
export async function prepareSeriesTables(c: DuckDBConnection, query: ResolvedBetaQuery, sources: BetaSources): Promise<PreparedTables> {
  return (await schemaLogic(c, query, sources, false)) as PreparedTables;
}

async function schemaLogic(c: DuckDBConnection, resolved: ResolvedBetaQuery, sources: BetaSources, inMemory: boolean): Promise<PreparedData | PreparedTables> {
  const { parsed: query, columns, rolesPath, roles, freq, timeColumn } = resolved;
  const source = sources.input;

  const types = checkSourceColumns(await source.describe(c), columns, source, rolesPath);
  const targets: (TargetSpec & { aggregate: Aggregate })[] = roles.targets.map((name, i) => {
    const role = columns[name] as Extract<(typeof columns)[string], { kind: 'target' }>;
    return { name, column: `y${i}`, impute: role.impute, aggregate: role.aggregate };
  });
  // first and last break ties in time by a row's place in the upload (decision 068).
  const position = targets.some((t) => ORDERED.has(t.aggregate)) ? unusedName('__position', Object.keys(columns)) : null;
  await source.attach(c, 'beta_input', Object.keys(columns), position ?? undefined);
  const rowCount = await checkTimes(c, 'beta_input', timeColumn, types.get(timeColumn)!, source, [...rolesPath, timeColumn]);
  await checkIdentifiers(c, 'beta_input', roles.identifiers, source, rolesPath);

  const ids = roles.identifiers.map((name, i) => ({ name, column: `i${i}` }));
  const idList = ids.map((id) => id.column);
  const historical = roles.historical.map((name, i) => ({ name, column: `h${i}` }));
  const selection = selectLevels(hierarchyLevels(roles.identifiers, query.input.hierarchies), query.selector);
  const levelOrder = `CASE lvl ${selection.levels.map((l, i) => `WHEN ${l.mask} THEN ${i}`).join(' ')} ELSE -1 END`;
  const idOrder = idList.map((col) => `, ${col} NULLS FIRST`).join('');

  // The base series, numbered. Values the selector asks for are filtered here: every selected
  // level keeps those identifiers, so their roll-ups are whole and no other series is prepared.
  const filters = [...selection.values].map(([name, values]) => `CAST(${sqlIdent(name)} AS VARCHAR) IN (${values.map(sqlString).join(', ')})`);
  await c.run(
    ids.length === 0
      ? 'CREATE TEMP TABLE beta_ids AS SELECT 0 AS sid, 0 AS lvl'
      : `CREATE TEMP TABLE beta_ids AS
         SELECT CAST(row_number() OVER (ORDER BY ${idList.join(', ')}) - 1 AS INTEGER) AS sid, 0 AS lvl, ${idList.join(', ')}
         FROM (SELECT DISTINCT ${ids.map((id) => `CAST(${sqlIdent(id.name)} AS VARCHAR) AS ${id.column}`).join(', ')} FROM beta_input ${filters.length ? `WHERE ${filters.join(' AND ')}` : ''})`,
  );
  const dictionary = await readDictionary(c, 'beta_ids', idList);
  if (dictionary.size === 0) {
    const message = `no rows of ${source.label} match the selector's values`;
    throw refuseField({ root: 'request', path: ['selector'] }, message);
  }

  const layout = {
    ids,
    targets,
    historical,
    time: timeExpression(timeColumn, types.get(timeColumn)!, 'beta_input'),
    position,
    freq,
    batches: passesFor(rowCount, dictionary.size),
  };
  const spec: BucketSpec = { ...layout, scales: await bucketScales(c, layout) };
  const baseOnly = selection.levels.length === 1 && selection.levels[0].mask === 0;
  if (inMemory && baseOnly && historical.length === 0 && !query.covariates?.length) {
    const series = await streamCompleteSeries(c, spec, dictionary, selection.levels[0]);
    if (series) return { freq, identifiers: roles.identifiers, targets: roles.targets, covariates: [], levels: selection.levels, series };
  }
  await bucketIntoTable(c, spec);

  const describeSeries = (sid: number) =>
    ids.flatMap((id, i) => (dictionary.get(sid)![i] === null ? [] : [`${id.name}=${dictionary.get(sid)![i]}`])).join(', ') || 'the series';
  const gapPath = (t: TargetSpec) => [...rolesPath, t.name, ...(t.impute ? [] : ['impute'])];
  /** Completes a table's series on the grid, unless they are complete already (the common case, and the cheap one). */
  const complete = async (table: string, filled: string, others: string[]): Promise<string> => {
    if (await isComplete(c, table, targets)) return table;
    await fillGrid(c, table, filled, targets, others);
    await checkNoGaps(c, filled, freq, targets, describeSeries, gapPath);
    return filled;
  };

  let base = await complete(
    'beta_bucketed',
    'beta_filled',
    historical.map((h) => h.column),
  );
  const covariateNames = await joinCovariates(c, query.covariates ?? [], sources.covariates, base, 'beta_base', {
    freq,
    timeColumn,
    identifierColumns: new Map(ids.map((id) => [id.name, id.column])),
  });
  if (covariateNames.length > 0) base = 'beta_base';
  const valueColumns = [...historical.map((h) => h.column), ...covariateNames.map((_, i) => `c${i}`)];

  const finals: { ids: string; values: string }[] = [];
  if (selection.levels.some((l) => l.mask === 0)) finals.push({ ids: 'beta_ids', values: base });
  const rollups = selection.levels.filter((l) => l.mask !== 0);
  if (rollups.length > 0) {
    await rollUp(c, { base, ids, targets, valueColumns, levels: rollups, firstSid: dictionary.size, order: `${levelOrder}${idOrder}` });
    for (const [sid, values] of await readDictionary(c, 'beta_rollup_ids', idList)) dictionary.set(sid, values);
    // A roll-up spans its children's union of steps; where no child has a step, the target's
    // impute rule fills it (or the gap is reported), as for the base series.
    finals.push({ ids: 'beta_rollup_ids', values: await complete('beta_rolled_k', 'beta_rollups', valueColumns) });
  }

  const order = `${levelOrder}${idOrder}`;
  const heads = finals.map((f) => `SELECT sid, min(k) AS k0, count(*) AS n FROM ${f.values} GROUP BY sid`).join(' UNION ALL ');
  const dictionaries = finals.map((f) => `SELECT sid, lvl${idList.map((col) => `, ${col}`).join('')} FROM ${f.ids}`).join(' UNION ALL ');
  // k as DOUBLE (exact up to 2^53) so it reads as a number, not a BigInt per row.
  const selected = ['sid', 'CAST(k AS DOUBLE) AS k', ...targets.map((t) => t.column), ...valueColumns].join(', ');
  return {
    freq,
    identifiers: roles.identifiers,
    targets: roles.targets,
    covariates: [...roles.historical, ...covariateNames],
    levels: selection.levels,
    headsSql: `SELECT h.sid, h.k0, h.n, d.* EXCLUDE (sid) FROM (${heads}) h JOIN (${dictionaries}) d USING (sid) ORDER BY ${order}`,
    valuesSql: finals.map((f) => `SELECT ${selected} FROM ${f.values}`).join(' UNION ALL '),
  };
}

/** `name`, or it with more underscores, so that it is none of `taken` (DuckDB's names ignore case). */
function unusedName(name: string, taken: string[]): string {
  const lower = new Set(taken.map((t) => t.toLowerCase()));
  while (lower.has(name.toLowerCase())) name = `_${name}`;
  return name;
}

/** sid -> identifier values (null where aggregated away) of a small dictionary table. */
async function readDictionary(c: DuckDBConnection, table: string, idList: string[]): Promise<Map<number, (string | null)[]>> {
  const rows = (await c.runAndReadAll(`SELECT sid${idList.map((col) => `, ${col}`).join('')} FROM ${table}`)).getRowsJS() as [number, ...(string | null)[]][];
  return new Map(rows.map(([sid, ...values]) => [Number(sid), values]));
}

/** A series' head as `headsSql` reads it: its sid, first step, length, level and identifier values. */
export type SeriesHead = { sid: number; k0: number; length: number; level: Level; ids: (string | null)[] };

export async function readHeads(c: DuckDBConnection, headsSql: string, levels: Level[]): Promise<SeriesHead[]> {
  const byMask = new Map(levels.map((l) => [l.mask, l]));
  const rows = (await c.runAndReadAll(headsSql)).getRowsJS() as (string | number | bigint | null)[][];
  return rows.map(([sid, k0, n, lvl, ...ids]) => ({
    sid: Number(sid),
    k0: Number(k0),
    length: Number(n),
    level: byMask.get(Number(lvl))!,
    ids: ids as (string | null)[],
  }));
}

/** Empty arrays for the heads' series, to be filled by `fillSeries`. */
export function emptySeries(heads: SeriesHead[], freq: Duration, targetCount: number, covariateCount: number): PreparedSeries[] {
  return heads.map((h) => ({
    level: h.level,
    ids: h.ids,
    start: stepTime(h.k0, freq),
    length: h.length,
    targets: Array.from({ length: targetCount }, () => new Float64Array(h.length)),
    covariates: Array.from({ length: covariateCount }, () => new Float64Array(h.length).fill(NaN)),
  }));
}

/**
 * Places rows of `sid, k, <targets...>, <covariates...>` into their series' arrays: rows come a
 * chunk at a time in no particular order and are placed by their step, so DuckDB never sorts.
 */
export async function fillSeries(result: DuckDBResult, bySid: Map<number, { series: PreparedSeries; k0: number }>): Promise<void> {
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
    const vectors = Array.from({ length: chunk.columnCount }, (_, j) => chunk.getColumnVector(j));
    for (let r = 0; r < chunk.rowCount; r++) {
      const { series: s, k0 } = bySid.get(vectors[0].getItem(r) as number)!;
      const at = (vectors[1].getItem(r) as number) - k0;
      const targetCount = s.targets.length;
      for (let j = 0; j < targetCount; j++) s.targets[j][at] = vectors[2 + j].getItem(r) as number;
      for (let j = 0; j < s.covariates.length; j++) s.covariates[j][at] = (vectors[2 + targetCount + j].getItem(r) as number | null) ?? NaN;
    }
  }
}

async function readSeries(c: DuckDBConnection, tables: PreparedTables): Promise<PreparedSeries[]> {
  const heads = await readHeads(c, tables.headsSql, tables.levels);
  const series = emptySeries(heads, tables.freq, tables.targets.length, tables.covariates.length);
  const bySid = new Map(heads.map((h, i) => [h.sid, { series: series[i], k0: h.k0 }]));
  await fillSeries(await c.stream(tables.valuesSql), bySid);
  return series;
}
