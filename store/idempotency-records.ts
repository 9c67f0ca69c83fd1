import { createHash, randomUUID } from 'node:crypto';
import type { ObjectStore } from './object-store.ts';

/**
 * Idempotency records of job submissions, in the job store beside the jobs, so that they survive a
 * restart and are shared by every API process of a bucket. Records and their replacement markers
 * are created with create-if-absent, so of concurrent first uses of a key exactly one wins, and two
 * retries never both replace an expired record: docs/decisions/026-idempotency-concurrent-first-use.md.
 */
export const IDEMPOTENCY = 'idempotency';

export interface IdempotencyRecord {
  /** This record's own id: a replacement names the record it replaces by it. */
  id: string;
  principal: string;
  key: string;
  /** SHA-256 of the canonical request (kind, query and body, or a multipart body's fields and parts' bytes). */
  fingerprint: string;
  /** The job the key stands for; chosen when the record is created, before the job exists. */
  job_id: string;
  /** `pending` while the job is being created; `created` once its workflow has started. */
  state: 'pending' | 'created';
  created_at: string;
  expires_at: string;
}

/** A principal's key, as a folder name: hashed, so any key characters are safe and keys never show in listings. */
const scopeKey = (principal: string, key: string) => `${IDEMPOTENCY}/${createHash('sha256').update(`${principal}\n${key}`).digest('hex')}`;
/** `idempotency/<sha256(principal, key)>/record.json`: the key's current record. */
const recordKey = (scope: string) => `${scope}/record.json`;
/** `.../replaced-<id>.json`: who replaced record <id> (expired or abandoned). */
const replacedKey = (scope: string, id: string) => `${scope}/replaced-${id}.json`;

export class IdempotencyRecords {
  constructor(private readonly objects: ObjectStore) {}

  /** The key's record, or null when it has none (expired records included: the caller decides). */
  read(principal: string, key: string): Promise<IdempotencyRecord | null> {
    return this.objects.readJson<IdempotencyRecord>(recordKey(scopeKey(principal, key)));
  }

  /** A new pending record for a key (not yet stored). */
  draft(principal: string, key: string, fingerprint: string, ttlMs: number, now = Date.now()): IdempotencyRecord {
    return {
      id: randomUUID(),
      principal,
      key,
      fingerprint,
      job_id: randomUUID(),
      state: 'pending',
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + ttlMs).toISOString(),
    };
  }

  /** Stores the first record of a key; false when another exists (someone else won). */
  create(record: IdempotencyRecord): Promise<boolean> {
    return this.objects.createJson(recordKey(scopeKey(record.principal, record.key)), record);
  }

  /** Replaces `old` (expired, or pending and abandoned) by `record`; false when someone else replaced it first. */
  async replace(old: IdempotencyRecord, record: IdempotencyRecord): Promise<boolean> {
    const scope = scopeKey(record.principal, record.key);
    if (!(await this.objects.createJson(replacedKey(scope, old.id), { by: record.id, at: new Date().toISOString() }))) return false;
    await this.objects.writeJson(recordKey(scope), record);
    return true;
  }

  /** Marks the record's job as created; only while the record is still this one (nobody replaced it). */
  async commit(record: IdempotencyRecord): Promise<void> {
    const current = await this.read(record.principal, record.key);
    if (current?.id === record.id) await this.objects.writeJson(recordKey(scopeKey(record.principal, record.key)), { ...record, state: 'created' });
  }

  /** Forgets a pending record whose job could not be created, so the key can be used again. */
  async release(record: IdempotencyRecord): Promise<void> {
    const current = await this.read(record.principal, record.key);
    if (current?.id === record.id) await this.objects.removeAll(scopeKey(record.principal, record.key));
  }

  /**
   * Removes the records that expired before `before` (epoch ms), with their markers; returns how
   * many. Callers leave a grace period after expiry, so that no request still acting on a record
   * it read can see it vanish.
   */
  async removeExpired(before: number): Promise<number> {
    let removed = 0;
    for (const name of await this.objects.children(IDEMPOTENCY)) {
      const scope = `${IDEMPOTENCY}/${name}`;
      const record = await this.objects.readJson<IdempotencyRecord>(recordKey(scope)).catch(() => null);
      if (record && Date.parse(record.expires_at) < before) {
        await this.objects.removeAll(scope);
        removed += 1;
      }
    }
    return removed;
  }
}
