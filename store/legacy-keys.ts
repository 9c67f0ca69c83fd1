import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { ApiKeys } from './api-keys.ts';

/**
 * Keys made before they moved to the job store lived in `DATA_DIR/keys.duckdb`, one file per host
 * (docs/decisions/001-api-keys-in-the-job-store.md). The import copies each key, and each
 * revocation, into the store with create-if-absent: importing again changes nothing, and a key
 * revoked in the store stays revoked whatever the file says. The file is left in place; nothing
 * writes it any more.
 */

export const legacyKeysFile = (dataDir: string): string => path.join(dataDir, 'keys.duckdb');

interface LegacyKey {
  id: string;
  principal: string;
  key_hash: string;
  prefix: string;
  created_ms: string;
  revoked_ms: string | null;
}

/** The keys of the file, read-only; none when there is no file (or no key table in it). */
async function readLegacyKeys(file: string): Promise<LegacyKey[]> {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const connection = await instance.connect();
  try {
    const run = async (sql: string) => (await connection.runAndReadAll(sql)).getRowObjectsJson() as unknown as Record<string, string | null>[];
    const [{ n }] = await run(`SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'api_keys'`);
    if (Number(n) === 0) return [];
    // Epoch milliseconds: a TIMESTAMPTZ as text would follow DuckDB's time zone setting.
    return (await run(
      `SELECT id, principal, key_hash, prefix, epoch_ms(created_at) AS created_ms, epoch_ms(revoked_at) AS revoked_ms FROM api_keys ORDER BY created_at`,
    )) as unknown as LegacyKey[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const iso = (epochMs: string) => new Date(Number(epochMs)).toISOString();

/** Copies the keys and revocations of `DATA_DIR/keys.duckdb`, if there is one, into the store; returns how many keys it added. */
export async function importLegacyKeys(dataDir: string, keys: ApiKeys): Promise<number> {
  const file = legacyKeysFile(dataDir);
  if (!fs.existsSync(file)) return 0;
  let legacy: LegacyKey[];
  try {
    legacy = await readLegacyKeys(file);
  } catch (error) {
    throw new Error(`the API keys of ${file} cannot be read: ${(error as Error).message.split('\n')[0]}`);
  }
  if (legacy.length === 0) return 0;
  // One listing first, so that an import already done costs no write.
  const known = new Map((await keys.list()).map((k) => [k.id, k]));
  let added = 0;
  for (const key of legacy) {
    const stored = known.get(key.id);
    if (!stored) {
      const record = { id: key.id, principal: key.principal, key_hash: key.key_hash, prefix: key.prefix, created_at: iso(key.created_ms) };
      if (await keys.add(record)) added += 1;
    }
    if (key.revoked_ms !== null && !stored?.revoked_at) await keys.addRevocation({ id: key.id, revoked_at: iso(key.revoked_ms) });
  }
  return added;
}
