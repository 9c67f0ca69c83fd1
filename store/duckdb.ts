import { DuckDBInstance } from '@duckdb/node-api';

let database: Promise<DuckDBInstance> | undefined;

/** The store's DuckDB: in memory, created on first use, shared by every job of the process. */
export const storeDatabase = (): Promise<DuckDBInstance> => (database ??= DuckDBInstance.create(':memory:'));
