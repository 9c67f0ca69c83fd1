import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { ObjectStore } from './object-store.ts';

/**
 * API keys made with the key CLI, in the job store so that every API process sharing it knows the
 * same keys. Key and revocation records are written once (create-if-absent) and never changed, so
 * a refresh is two listings plus the records not seen yet: docs/decisions/001-api-keys-in-the-job-store.md.
 * Only a SHA-256 of each key is stored: docs/decisions/022-keys-and-job-ownership.md.
 */
export const API_KEYS = 'api-keys';
const KEYS = `${API_KEYS}/keys`;
const REVOKED = `${API_KEYS}/revoked`;

/** Records read at once when many are new (the first refresh of a store with many keys). */
const PARALLEL_READS = 16;

export interface KeyRecord {
  id: string;
  principal: string;
  /** SHA-256 of the clear key, hex. */
  key_hash: string;
  /** The key's first 10 characters, to recognise it in a listing. */
  prefix: string;
  created_at: string;
}

export interface Revocation {
  id: string;
  revoked_at: string;
}

export interface StoredKey {
  id: string;
  principal: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** The form of every key `create` makes (and the key CLI made before keys moved here): `fsk_` and 32 random bytes, base64url. */
const KEY_FORM = /^fsk_[A-Za-z0-9_-]{43}$/;

/** Whether a key could be one of the store's: any other is refused without reading the store. */
export const hasStoreKeyForm = (key: string): boolean => KEY_FORM.test(key);

/** `api-keys/keys/<id>.json`: { id, principal, key_hash, prefix, created_at }. */
const keyRecordKey = (id: string) => `${KEYS}/${id}.json`;
/** `api-keys/revoked/<id>.json`: { id, revoked_at }. */
const revocationKey = (id: string) => `${REVOKED}/${id}.json`;

export class ApiKeys {
  /** Every key record read so far, by id: immutable, so never read again. */
  private readonly records = new Map<string, KeyRecord>();
  /** When each revoked key was revoked, as far as read (list() needs it; activeHashes() only the ids). */
  private readonly revokedAt = new Map<string, string>();

  constructor(private readonly objects: ObjectStore) {}

  /** Creates a key for a principal; the clear key is returned once and never stored. */
  async create(principal: string): Promise<{ id: string; key: string }> {
    const key = `fsk_${randomBytes(32).toString('base64url')}`;
    const record: KeyRecord = { id: randomUUID(), principal, key_hash: hashKey(key), prefix: key.slice(0, 10), created_at: new Date().toISOString() };
    if (!(await this.add(record))) throw new Error(`an API key with id ${record.id} already exists`);
    return { id: record.id, key };
  }

  /** Stores a key record unless one with its id exists; true when this call stored it. */
  add(record: KeyRecord): Promise<boolean> {
    return this.objects.createJson(keyRecordKey(record.id), record);
  }

  /** Records a key's revocation unless it has one; true when this call recorded it. */
  addRevocation(revocation: Revocation): Promise<boolean> {
    return this.objects.createJson(revocationKey(revocation.id), revocation);
  }

  /** Every key, revoked ones included, oldest first. */
  async list(): Promise<StoredKey[]> {
    const { records, revoked } = await this.refresh();
    const unread = [...revoked].filter((id) => records.has(id) && !this.revokedAt.has(id));
    await forEachLimited(unread, async (id) => {
      const revocation = await this.objects.readJson<Revocation>(revocationKey(id));
      if (revocation) this.revokedAt.set(id, revocation.revoked_at);
    });
    return [...records.values()]
      .map(({ id, principal, prefix, created_at }) => ({
        id,
        principal,
        prefix,
        created_at,
        revoked_at: revoked.has(id) ? (this.revokedAt.get(id) ?? '') : null,
      }))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /** Revokes the active keys whose id or listed prefix is `idOrPrefix`; returns how many this call revoked. */
  async revoke(idOrPrefix: string): Promise<number> {
    const { records, revoked } = await this.refresh();
    const matching = [...records.values()].filter((r) => !revoked.has(r.id) && (r.id === idOrPrefix || r.prefix === idOrPrefix));
    const revokedAt = new Date().toISOString();
    const created = await Promise.all(matching.map((r) => this.addRevocation({ id: r.id, revoked_at: revokedAt })));
    return created.filter(Boolean).length;
  }

  /** Hash -> principal of every key not revoked. */
  async activeHashes(): Promise<Map<string, string>> {
    const { records, revoked } = await this.refresh();
    const active = new Map<string, string>();
    for (const record of records.values()) if (!revoked.has(record.id)) active.set(record.key_hash, record.principal);
    return active;
  }

  /** The two listings, and reads of the key records not seen before. */
  private async refresh(): Promise<{ records: Map<string, KeyRecord>; revoked: Set<string> }> {
    const [keyIds, revokedIds] = await Promise.all([this.ids(KEYS), this.ids(REVOKED)]);
    await forEachLimited(
      keyIds.filter((id) => !this.records.has(id)),
      async (id) => {
        // Null only where the record went away since the listing: left out, listed again next time.
        const record = await this.objects.readJson<KeyRecord>(keyRecordKey(id));
        if (record) this.records.set(id, record);
      },
    );
    return { records: this.records, revoked: new Set(revokedIds) };
  }

  private async ids(prefix: string): Promise<string[]> {
    return (await this.objects.children(prefix)).filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length));
  }
}

async function forEachLimited<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, items.length) }, lane));
}
