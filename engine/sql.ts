import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/** Small helpers for the SQL the service writes for DuckDB (the beta schema logic, the job store). */

/** A column or table name as a quoted SQL identifier. */
export const sqlIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** A string as a SQL literal. */
export const sqlString = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** A finite number as a SQL DOUBLE literal. */
export const sqlNumber = (x: number): string => `CAST(${JSON.stringify(x)} AS DOUBLE)`;

/** Runs work on a connection of its own, closed afterwards whatever happens. */
export async function withConnection<T>(db: DuckDBInstance, work: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const connection = await db.connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
  }
}
