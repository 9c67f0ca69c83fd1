import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { EngineError } from '../errors.ts';
import { withConnection } from '../sql.ts';

/**
 * The DuckDB database the beta schema logic runs in: in memory, spilling to `tempDirectory`
 * when a large upload does not fit. Every request works on its own connection with TEMP
 * objects, so requests never see each other's tables and closing the connection drops them.
 */
export interface BetaDatabaseOptions {
  tempDirectory: string;
  memoryLimit?: string | null;
  /**
   * SQL run once when the database opens: how an operator configures DuckDB for object stores
   * (`CREATE SECRET (TYPE s3, KEY_ID ..., SECRET ..., REGION ...)`, endpoints, `SET` options).
   */
  initSql?: string | null;
}

export async function openBetaDatabase(options: BetaDatabaseOptions): Promise<DuckDBInstance> {
  fs.mkdirSync(options.tempDirectory, { recursive: true });
  const db = await DuckDBInstance.create(':memory:', {
    temp_directory: options.tempDirectory,
    ...(options.memoryLimit ? { memory_limit: options.memoryLimit } : {}),
    // The server may have no internet; object-store support is loaded only when configured.
    autoinstall_known_extensions: 'false',
  }).catch((error: unknown) => {
    // DuckDB says only "Failed to set config"; the one setting of ours it reads is the memory limit.
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new Error(
      options.memoryLimit
        ? `BETA_DUCKDB_MEMORY_LIMIT '${options.memoryLimit}' is not a size DuckDB takes (such as 4GB or 512MB): ${reason}`
        : `DuckDB could not start: ${reason}`,
    );
  });
  // Every time is UTC: naive timestamps are read as UTC, zoned ones converted to it. (Set once
  // the built-in ICU extension is loaded; as a creation option it is refused.)
  await withConnection(db, (c) => c.run("SET GLOBAL TimeZone = 'UTC'"));
  if (options.initSql) {
    const sql = options.initSql;
    await withConnection(db, (c) => c.run(sql)).catch((error: unknown) => {
      db.closeSync();
      throw new Error(`BETA_DUCKDB_INIT failed in DuckDB: ${withoutLiterals(error instanceof Error ? error.message : String(error), sql)}`);
    });
  }
  return db;
}

/**
 * DuckDB's reason, fit for a log: its first line only (a parser error goes on to quote the
 * statement), and none of the statement's string literals, which hold the secrets a
 * `CREATE SECRET` is for.
 */
function withoutLiterals(message: string, sql: string): string {
  let reason = message.split('\n')[0];
  // Short literals ('x', 'us') hold no secret, and would mask words of the reason itself.
  for (const [, literal] of sql.matchAll(/'((?:[^']|''){4,})'/g)) reason = reason.split(literal).join('***');
  return reason;
}

/**
 * The beta database of one process, spilling under DATA_DIR. DATA_DIR may be shared by several
 * processes (docs/operations.md, "Jobs, workers and scale-out"): each keeps its spill files in a folder of its own, removed on close.
 */
export async function openProcessBetaDatabase(
  dataDir: string,
  options: Omit<BetaDatabaseOptions, 'tempDirectory'>,
): Promise<{ db: DuckDBInstance; close(): void }> {
  const spill = path.join(dataDir, 'beta-duckdb-tmp', `${os.hostname()}-${process.pid}`);
  const db = await openBetaDatabase({ ...options, tempDirectory: spill });
  return {
    db,
    close() {
      db.closeSync();
      fs.rmSync(spill, { recursive: true, force: true });
    },
  };
}

/**
 * DuckDB's refusal when a statement needs more memory than its limit even with spilling: the
 * upload is too large for this server's setting, not a fault of the service.
 */
export function asMemoryRefusal(error: unknown): EngineError | null {
  const message = error instanceof Error ? error.message : String(error);
  if (!/^Out of Memory Error/i.test(message)) return null;
  return new EngineError(
    'insufficient_memory',
    `the upload needs more working memory than DuckDB may use on this server (${message.split('\n')[0]}); send less data per request, or raise BETA_DUCKDB_MEMORY_LIMIT`,
  );
}

const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL\(\d+,\s*\d+\))$/;
const TEMPORAL = /^(TIMESTAMP|TIMESTAMP_S|TIMESTAMP_MS|TIMESTAMP_NS|TIMESTAMP WITH TIME ZONE|DATE)$/;

export const isNumericType = (type: string): boolean => NUMERIC.test(type);
export const isTemporalType = (type: string): boolean => TEMPORAL.test(type);
