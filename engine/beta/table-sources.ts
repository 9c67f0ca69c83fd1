import type { DuckDBConnection } from '@duckdb/node-api';
import { refuseField, type EngineError, type FieldRef } from '../errors.ts';
import { sqlIdent, sqlString } from '../sql.ts';

/** A column of a source as DuckDB types it (`DOUBLE`, `VARCHAR`, `TIMESTAMP WITH TIME ZONE`...). */
export interface ColumnInfo {
  name: string;
  type: string;
  /** Why its values cannot be trusted as DuckDB reads them, when they cannot: the column is refused where a query uses it. */
  misread?: string;
}

/**
 * One table of data the query reads: an uploaded part or a locator. The schema logic only
 * needs its columns and a way to make it readable under a name in the request's connection.
 */
export interface TableSource {
  /** How messages name it: "part 'sales'", "locator 'sales/*.parquet'". */
  readonly label: string;
  /** Where errors about it point: the query's `input.source`, or an uploaded part. */
  readonly at: FieldRef;
  describe(c: DuckDBConnection): Promise<ColumnInfo[]>;
  /**
   * Makes the source readable as the TEMP relation `name`; only `columns` are needed. With
   * `position`, the relation also has a BIGINT column of that name: the row's place in the upload,
   * increasing with its files in order, then its rows in order within a file, the same in every
   * run. `first` and `last` break ties in time by it (decision 068).
   */
  attach(c: DuckDBConnection, name: string, columns: string[], position?: string): Promise<void>;
}

/** The sources of one query: its input, and each covariate's in order. */
export interface BetaSources {
  input: TableSource;
  covariates: TableSource[];
}

export function unreadable(source: Pick<TableSource, 'label' | 'at'>, what: string, error: unknown): EngineError {
  // DuckDB prefixes its messages with the error class; the caller needs the reason only.
  const reason = (error instanceof Error ? error.message : String(error)).replace(/^[A-Za-z ]+Error: /, '').split('\n')[0];
  return refuseField(source.at, `${source.label} could not be read as ${what}: ${reason}`);
}

/**
 * A Parquet row's place: its file's index in the list (a glob's files in the order DuckDB expands
 * it, by name) above its row number within the file. Both are DuckDB's virtual columns, read only
 * where a query names them; 2^40 rows a file and 2^23 files keep the position within a BIGINT.
 */
const PARQUET_POSITION = 'CAST(file_index AS BIGINT) * 1099511627776 + file_row_number';
const VIRTUAL_COLUMNS = ['file_index', 'file_row_number'];

/**
 * Parquet decimals wider than 38 digits, which DuckDB 1.5.5 (decision 013) types as DOUBLE and
 * reads as wrong numbers without an error (decision 099). Only a DOUBLE column can be one, so the
 * footers are read a second time only when the files have a DOUBLE column.
 */
async function wideDecimals(c: DuckDBConnection, fileList: string, columns: ColumnInfo[]): Promise<Map<string, string>> {
  if (!columns.some((col) => col.type === 'DOUBLE')) return new Map();
  const result = await c.runAndReadAll(
    `SELECT DISTINCT name, CAST(precision AS INTEGER) AS digits, CAST(scale AS INTEGER) AS scale FROM parquet_schema(${fileList}) WHERE converted_type = 'DECIMAL' AND precision > 38`,
  );
  const rows = result.getRowObjectsJS() as { name: string; digits: number; scale: number }[];
  return new Map(rows.map((row) => [row.name, `DECIMAL(${row.digits},${row.scale})`]));
}

/** Parquet files DuckDB reads in place (an uploaded part, local files, an object-store glob). */
export function parquetSource(label: string, at: FieldRef, files: string[]): TableSource {
  const fileList = `[${files.map(sqlString).join(', ')}]`;
  const relation = `read_parquet(${fileList}, union_by_name = true)`;
  // Described once: attach reads the columns again for first and last (decision 068), and a glob
  // of many files, or an object store, would read every footer again.
  let described: Promise<ColumnInfo[]> | undefined;
  const describe = (c: DuckDBConnection): Promise<ColumnInfo[]> =>
    (described ??= (async () => {
      try {
        const result = await c.runAndReadAll(`DESCRIBE SELECT * FROM ${relation}`);
        const columns: ColumnInfo[] = result.getRowObjectsJS().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
        const wide = await wideDecimals(c, fileList, columns);
        return columns.map((col) =>
          col.type === 'DOUBLE' && wide.has(col.name)
            ? {
                ...col,
                misread: `a Parquet ${wide.get(col.name)}; decimals of more than 38 digits are not read correctly here: write it as DOUBLE, or as DECIMAL(38, s) at most`,
              }
            : col,
        );
      } catch (error) {
        throw unreadable({ label, at }, 'Parquet', error);
      }
    })());
  return {
    label,
    at,
    describe,
    async attach(c, name, columns, position) {
      const own = new Set((position ? await describe(c) : []).map((col) => col.name.toLowerCase()));
      if (!position || !VIRTUAL_COLUMNS.some((v) => own.has(v))) {
        const selected = [...columns.map(sqlIdent), ...(position ? [`${PARQUET_POSITION} AS ${sqlIdent(position)}`] : [])];
        await c.run(`CREATE TEMP VIEW ${sqlIdent(name)} AS SELECT ${selected.join(', ')} FROM ${relation}`);
        return;
      }
      // A file's own column of either name hides DuckDB's: the rows are copied instead, in the
      // order they are read (DuckDB keeps a scan's order where nothing sorts), and numbered by rowid.
      const table = `${name}_rows`;
      await c.run(`CREATE TEMP TABLE ${sqlIdent(table)} AS SELECT ${columns.map((col, i) => `${sqlIdent(col)} AS c${i}`).join(', ')} FROM ${relation}`);
      await rowidView(c, name, table, columns, position);
    },
  };
}

/**
 * The view `name` over `table`, whose columns c0, c1, ... are `columns` and whose rows were
 * inserted in the upload's order: each row's rowid is then its place, named `position`. The
 * columns are numbered so that an uploaded column called rowid cannot hide the pseudo-column.
 */
export async function rowidView(c: DuckDBConnection, name: string, table: string, columns: string[], position: string): Promise<void> {
  const selected = [...columns.map((col, i) => `c${i} AS ${sqlIdent(col)}`), `rowid AS ${sqlIdent(position)}`];
  await c.run(`CREATE TEMP VIEW ${sqlIdent(name)} AS SELECT ${selected.join(', ')} FROM ${sqlIdent(table)}`);
}
