import type { DuckDBConnection } from '@duckdb/node-api';
import { refuseField, type EngineError, type FieldRef } from '../errors.ts';
import { sqlIdent, sqlString } from '../sql.ts';

/** A column of a source as DuckDB types it (`DOUBLE`, `VARCHAR`, `TIMESTAMP WITH TIME ZONE`...). */
export interface ColumnInfo {
  name: string;
  type: string;
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
  /** Makes the source readable as the TEMP relation `name`; only `columns` are needed. */
  attach(c: DuckDBConnection, name: string, columns: string[]): Promise<void>;
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

/** Parquet files DuckDB reads in place (an uploaded part, local files, an object-store glob). */
export function parquetSource(label: string, at: FieldRef, files: string[]): TableSource {
  const relation = `read_parquet([${files.map(sqlString).join(', ')}], union_by_name = true)`;
  return {
    label,
    at,
    async describe(c) {
      try {
        const result = await c.runAndReadAll(`DESCRIBE SELECT * FROM ${relation}`);
        return result.getRowObjectsJS().map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
      } catch (error) {
        throw unreadable({ label, at }, 'Parquet', error);
      }
    },
    async attach(c, name, columns) {
      await c.run(`CREATE TEMP VIEW ${sqlIdent(name)} AS SELECT ${columns.map(sqlIdent).join(', ')} FROM ${relation}`);
    },
  };
}
