import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { hashKey } from '../../store/api-keys.ts';

export interface LegacyKey {
  id: string;
  principal: string;
  key: string;
  revoked: boolean;
}

/**
 * A `DATA_DIR/keys.duckdb` as the key CLI wrote it before keys moved to the job store (its table,
 * as that CLI created it), with the given keys: the i-th created on 2024-03-0(i+1) 10:00:00.250 UTC,
 * the revoked ones revoked on 2024-04-01 12:00 UTC.
 */
export async function writeLegacyKeys(dataDir: string, keys: { principal: string; revoked: boolean }[]): Promise<LegacyKey[]> {
  const made = keys.map(({ principal, revoked }) => ({ id: randomUUID(), principal, key: `fsk_${randomBytes(32).toString('base64url')}`, revoked }));
  fs.mkdirSync(dataDir, { recursive: true });
  const db = await DuckDBInstance.create(path.join(dataDir, 'keys.duckdb'));
  const connection = await db.connect();
  try {
    await connection.run(`CREATE TABLE api_keys (
      id VARCHAR PRIMARY KEY, principal VARCHAR NOT NULL, key_hash VARCHAR NOT NULL UNIQUE,
      prefix VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL, revoked_at TIMESTAMPTZ)`);
    for (const [i, k] of made.entries()) {
      const revokedAt = k.revoked ? `TIMESTAMPTZ '2024-04-01 12:00:00+00'` : 'NULL';
      await connection.run(`INSERT INTO api_keys VALUES ($id, $principal, $hash, $prefix, TIMESTAMPTZ '2024-03-0${i + 1} 10:00:00.250+00', ${revokedAt})`, {
        id: k.id,
        principal: k.principal,
        hash: hashKey(k.key),
        prefix: k.key.slice(0, 10),
      });
    }
  } finally {
    connection.closeSync();
    db.closeSync();
  }
  return made;
}
