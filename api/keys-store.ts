import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

/**
 * API keys created with the CLI, kept in an embedded DuckDB file under DATA_DIR. Only a
 * SHA-256 of each key is stored: keys are 256 random bits, so a fast hash is safe and lets the
 * server check a key without a slow password hash on every request.
 */

export interface StoredKey {
  id: string;
  principal: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export const keysFile = (dataDir: string): string => path.join(dataDir, 'keys.duckdb');

const SCHEMA = `CREATE TABLE IF NOT EXISTS api_keys (
  id VARCHAR PRIMARY KEY, principal VARCHAR NOT NULL, key_hash VARCHAR NOT NULL UNIQUE,
  prefix VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL, revoked_at TIMESTAMPTZ)`;

async function withDatabase<T>(
  file: string,
  readOnly: boolean,
  work: (run: (sql: string, values?: Record<string, string>) => Promise<Record<string, unknown>[]>) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(file, readOnly ? { access_mode: 'READ_ONLY' } : {});
  const connection = await instance.connect();
  try {
    const run = async (sql: string, values?: Record<string, string>) =>
      (await connection.runAndReadAll(sql, values)).getRowObjectsJson() as Record<string, unknown>[];
    if (!readOnly) await run(SCHEMA);
    return await work(run);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Creates a key for a principal; the clear key is returned once and never stored. */
export async function createKey(dataDir: string, principal: string): Promise<{ id: string; key: string }> {
  fs.mkdirSync(dataDir, { recursive: true });
  const key = `fsk_${randomBytes(32).toString('base64url')}`;
  const id = randomUUID();
  await withDatabase(keysFile(dataDir), false, (run) =>
    run(`INSERT INTO api_keys VALUES ($id, $principal, $hash, $prefix, now(), NULL)`, { id, principal, hash: hashKey(key), prefix: key.slice(0, 10) }),
  );
  return { id, key };
}

export async function listKeys(dataDir: string): Promise<StoredKey[]> {
  if (!fs.existsSync(keysFile(dataDir))) return [];
  return withDatabase(
    keysFile(dataDir),
    true,
    async (run) =>
      (await run(
        `SELECT id, principal, prefix, created_at::VARCHAR AS created_at, revoked_at::VARCHAR AS revoked_at FROM api_keys ORDER BY created_at`,
      )) as unknown as StoredKey[],
  );
}

/** Revokes by key id or by the key's listed prefix; returns how many keys were revoked. */
export async function revokeKey(dataDir: string, idOrPrefix: string): Promise<number> {
  if (!fs.existsSync(keysFile(dataDir))) return 0;
  return withDatabase(keysFile(dataDir), false, async (run) => {
    const rows = await run(`UPDATE api_keys SET revoked_at = now() WHERE (id = $v OR prefix = $v) AND revoked_at IS NULL RETURNING id`, { v: idOrPrefix });
    return rows.length;
  });
}

/** Hash -> principal for every key not revoked. */
export async function activeKeyHashes(dataDir: string): Promise<Map<string, string>> {
  if (!fs.existsSync(keysFile(dataDir))) return new Map();
  return withDatabase(keysFile(dataDir), true, async (run) => {
    const rows = await run(`SELECT key_hash, principal FROM api_keys WHERE revoked_at IS NULL`);
    return new Map(rows.map((r) => [String(r.key_hash), String(r.principal)]));
  });
}
