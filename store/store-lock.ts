import { randomUUID } from 'node:crypto';
import type { ObjectStore } from './object-store.ts';

/**
 * A lock in the job store, so that every process sharing the store takes turns: counting a
 * principal's jobs (store/active-jobs.ts), changing, triggering or removing a schedule
 * (store/schedule-records.ts).
 * See docs/decisions/027-quotas-checked-before-storing.md.
 */

/** A lock older than this was left by a process that died holding it; every holder is done in seconds. */
const LOCK_TTL_MS = 30_000;
/** How long a caller waits for the lock before giving up (many callers at once). */
const LOCK_WAIT_MS = 15_000;

interface Lock {
  id: string;
  expires_at: number;
}

/** The lock could not be taken in time: too many callers at once. */
export class StoreLockBusyError extends Error {
  override readonly name = 'StoreLockBusyError';
}

/**
 * Runs `work` holding the lock kept in `folder`: `<folder>/lock.json` is taken with the store's
 * create-if-absent, an expired one taken over by whoever first creates its `replaced-<id>.json`
 * marker, and the folder is removed after `work`. `what` names the lock in the busy error.
 */
export async function withStoreLock<T>(objects: ObjectStore, folder: string, what: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  const lock: Lock = { id: randomUUID(), expires_at: 0 };
  for (;;) {
    lock.expires_at = Date.now() + LOCK_TTL_MS;
    if (await objects.createJson(`${folder}/lock.json`, lock)) break;
    const held = await objects.readJson<Lock>(`${folder}/lock.json`);
    if (held && held.expires_at < Date.now() && (await objects.createJson(`${folder}/replaced-${held.id}.json`, { by: lock.id }))) {
      await objects.writeJson(`${folder}/lock.json`, lock);
      break;
    }
    if (Date.now() > deadline) throw new StoreLockBusyError(`the job store's lock of ${what} was busy for ${LOCK_WAIT_MS / 1000} s`);
    // Jittered, so that waiters do not all retry at once.
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
  }
  try {
    return await work();
  } finally {
    const held = await objects.readJson<Lock>(`${folder}/lock.json`).catch(() => null);
    if (held?.id === lock.id) await objects.removeAll(folder).catch(() => undefined);
  }
}
