import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { withConnection } from '../engine/sql.ts';
import type { ObjectStore } from './object-store.ts';

/**
 * The job store's DuckDB: in memory, created on first use, shared by every job of the process,
 * and set up to read and write the store's locations (for a bucket: httpfs and a secret with the
 * store's credentials, renewed before they lapse).
 */
export class StoreDatabase {
  private database: Promise<DuckDBInstance> | undefined;
  private setupValidUntil = -Infinity;
  private settingUp: Promise<void> | undefined;

  constructor(private readonly objects: ObjectStore) {}

  async use<T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const db = await (this.database ??= DuckDBInstance.create(':memory:'));
    if (Date.now() >= this.setupValidUntil) await (this.settingUp ??= this.setUp(db).finally(() => (this.settingUp = undefined)));
    try {
      return await withConnection(db, work);
    } catch (error) {
      throw this.objects.unavailable?.(error) ?? error;
    }
  }

  private async setUp(db: DuckDBInstance): Promise<void> {
    const { sql, validUntil } = await this.objects.duckdbSetup();
    await withConnection(db, async (connection) => {
      for (const statement of sql) await connection.run(statement);
    });
    this.setupValidUntil = validUntil;
  }

  close(): void {
    void this.database?.then((db) => db.closeSync());
    this.database = undefined;
  }
}
