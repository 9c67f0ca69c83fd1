import type { DuckDBConnection } from '@duckdb/node-api';
import { invalidRequest, refuseField, requestField, type FieldError, type FieldPath } from '../errors.ts';
import { sqlIdent } from '../sql.ts';
import { isNumericType, isTemporalType } from './beta-database.ts';
import type { Columns } from './query-fields.ts';
import type { ColumnInfo, TableSource } from './table-sources.ts';

/**
 * The columns a query names must exist in its source with a type that fits their role: a target
 * or a historical covariate is numeric, a time is a timestamp, a date or ISO 8601 text.
 * Identifiers may be of any type; they are compared and returned as text.
 */
export function checkSourceColumns(info: ColumnInfo[], columns: Columns, source: TableSource, rolesPath: FieldPath): Map<string, string> {
  const types = new Map(info.map((c) => [c.name, c.type]));
  const misread = new Map(info.flatMap((c) => (c.misread ? [[c.name, c.misread]] : [])));
  const errors: FieldError[] = [];
  for (const [name, role] of Object.entries(columns)) {
    const path = [...rolesPath, name];
    const type = types.get(name);
    if (misread.has(name)) {
      errors.push({ root: 'request', path, message: `column '${name}' is ${misread.get(name)}` });
    } else if (type === undefined) {
      errors.push({
        root: 'request',
        path,
        message: `${source.label} has no column '${name}'; its columns are ${info.map((c) => c.name).join(', ') || 'none'}`,
      });
    } else if (typeof role === 'object' && role.kind === 'time') {
      if (!isTemporalType(type) && type !== 'VARCHAR')
        errors.push({ root: 'request', path, message: `column '${name}' is ${type}; a time column holds timestamps, dates or ISO 8601 text` });
    } else if (role !== 'identifier' && !isNumericType(type)) {
      const what =
        role === 'historical' ? 'a historical covariate must be numeric here (no model on this server takes text covariates)' : 'a target must be numeric';
      errors.push({ root: 'request', path, message: `column '${name}' is ${type}; ${what}` });
    }
  }
  if (errors.length > 0) throw invalidRequest(`${source.label} does not have the columns the query describes`, errors);
  return types;
}

/**
 * A column of `relation`, qualified when a query joins it to tables of the service's own: their
 * names (`sid`, `i0`, `rowid`) are also names an upload may use.
 */
const columnRef = (column: string, relation?: string): string => (relation ? `${sqlIdent(relation)}.${sqlIdent(column)}` : sqlIdent(column));

/** The time column as a UTC TIMESTAMP (the connection's time zone is UTC); text that is no date becomes NULL. */
export function timeExpression(column: string, type: string, relation?: string): string {
  const col = columnRef(column, relation);
  return type === 'VARCHAR' ? `CAST(TRY_CAST(${col} AS TIMESTAMPTZ) AS TIMESTAMP)` : `CAST(${col} AS TIMESTAMP)`;
}

/** A numeric column as DOUBLE, with NaN and infinities read as missing. */
export function valueExpression(column: string, relation?: string): string {
  const value = `CAST(${columnRef(column, relation)} AS DOUBLE)`;
  return `CASE WHEN isfinite(${value}) THEN ${value} END`;
}

/**
 * Rows whose time cannot be placed on the grid are refused, never dropped: a missing time, or
 * text that is not a date (with an example of it). Returns the number of rows.
 */
export async function checkTimes(c: DuckDBConnection, relation: string, column: string, type: string, source: TableSource, path: FieldPath): Promise<number> {
  const col = sqlIdent(column);
  const result = await c.runAndReadAll(
    `SELECT count(*) FILTER (WHERE ${col} IS NULL) AS missing,
            count(*) FILTER (WHERE ${col} IS NOT NULL AND ${timeExpression(column, type)} IS NULL) AS unreadable,
            any_value(CAST(${col} AS VARCHAR)) FILTER (WHERE ${col} IS NOT NULL AND ${timeExpression(column, type)} IS NULL) AS example,
            count(*) AS total
     FROM ${sqlIdent(relation)}`,
  );
  const [row] = result.getRowObjectsJS() as { missing: bigint; unreadable: bigint; example: string | null; total: bigint }[];
  const fail = (message: string) => {
    throw refuseField({ root: 'request', path }, message);
  };
  if (row.total === 0n) fail(`${source.label} has no rows`);
  if (row.missing > 0n) fail(`${row.missing} row(s) of ${source.label} have no value in the time column '${column}'`);
  if (row.unreadable > 0n)
    fail(`${row.unreadable} row(s) of ${source.label} have a time that is not a date or ISO 8601 date-time in '${column}', such as '${row.example}'`);
  return Number(row.total);
}

/** Rows without a value in an identifier column would form an unnamed series: refused. */
export async function checkIdentifiers(c: DuckDBConnection, relation: string, identifiers: string[], source: TableSource, rolesPath: FieldPath): Promise<void> {
  if (identifiers.length === 0) return;
  const counts = identifiers.map((id, i) => `count(*) FILTER (WHERE ${sqlIdent(id)} IS NULL) AS n${i}`).join(', ');
  const [row] = (await c.runAndReadAll(`SELECT ${counts} FROM ${sqlIdent(relation)}`)).getRowsJS() as bigint[][];
  const errors: FieldError[] = [];
  identifiers.forEach((id, i) => {
    if (row[i] > 0n) errors.push(requestField([...rolesPath, id], `${row[i]} row(s) of ${source.label} have no value in the identifier column '${id}'`));
  });
  if (errors.length > 0) throw invalidRequest(`${source.label} has rows without an identifier`, errors);
}
