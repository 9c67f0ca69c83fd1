import { createHash, randomUUID } from 'node:crypto';
import { isJobId } from './layout.ts';
import type { ObjectStore } from './object-store.ts';

/**
 * Which jobs of a principal may still be in progress, for the concurrent-jobs quota, in the job
 * store so that every API process sharing it counts the same jobs. Entries are pruned by whoever
 * counts (asking Temporal), and a per-principal lock makes counting and adding one step:
 * docs/decisions/027-quotas-checked-before-storing.md.
 */
export const ACTIVE_JOBS = 'active-jobs';

/** A lock older than this was left by a process that died holding it; counting takes milliseconds. */
const LOCK_TTL_MS = 30_000;
/** How long a submission waits for the lock before giving up (many submissions of one principal at once). */
const LOCK_WAIT_MS = 15_000;

const principalKey = (principal: string) => `${ACTIVE_JOBS}/${createHash('sha256').update(principal).digest('hex')}`;
// A folder per job, so that removing one entry is removing a prefix, the same on disk and in a bucket.
const jobKey = (principal: string, jobId: string) => `${principalKey(principal)}/${jobId}`;
/** `active-jobs/<sha256(principal)>/<job_id>/entry.json`: { created_at }, written before the job's workflow starts. */
const entryKey = (principal: string, jobId: string) => `${jobKey(principal, jobId)}/entry.json`;
/** `.../lock/lock.json`: held while one submission counts and adds its entry; `.../lock/replaced-<id>.json`: who took over an expired lock. */
const lockFolder = (principal: string) => `${principalKey(principal)}/lock`;

interface Lock {
  id: string;
  expires_at: number;
}

/** The principal's lock could not be taken in time: too many of its submissions at once. */
export class ActiveJobsBusyError extends Error {
  override readonly name = 'ActiveJobsBusyError';
}

export class ActiveJobs {
  constructor(private readonly objects: ObjectStore) {}

  async add(principal: string, jobId: string, now = Date.now()): Promise<void> {
    await this.objects.writeJson(entryKey(principal, jobId), { created_at: new Date(now).toISOString() });
  }

  /** The job ids of the principal's entries. */
  async list(principal: string): Promise<string[]> {
    return (await this.objects.children(principalKey(principal))).filter(isJobId);
  }

  /** When the entry was added (epoch ms); null when it is gone. */
  async addedAt(principal: string, jobId: string): Promise<number | null> {
    const entry = await this.objects.readJson<{ created_at: string }>(entryKey(principal, jobId));
    return entry ? Date.parse(entry.created_at) : null;
  }

  async remove(principal: string, jobId: string): Promise<void> {
    await this.objects.removeAll(jobKey(principal, jobId));
  }

  /**
   * Runs `work` holding the principal's lock: taken with the store's create-if-absent, an expired
   * one taken over by whoever first creates its `replaced-<id>` marker, released after `work`.
   */
  async locked<T>(principal: string, work: () => Promise<T>): Promise<T> {
    const folder = lockFolder(principal);
    const deadline = Date.now() + LOCK_WAIT_MS;
    const lock: Lock = { id: randomUUID(), expires_at: 0 };
    for (;;) {
      lock.expires_at = Date.now() + LOCK_TTL_MS;
      if (await this.objects.createJson(`${folder}/lock.json`, lock)) break;
      const held = await this.objects.readJson<Lock>(`${folder}/lock.json`);
      if (held && held.expires_at < Date.now() && (await this.objects.createJson(`${folder}/replaced-${held.id}.json`, { by: lock.id }))) {
        await this.objects.writeJson(`${folder}/lock.json`, lock);
        break;
      }
      if (Date.now() > deadline) throw new ActiveJobsBusyError(`the job store's lock of this principal's jobs was busy for ${LOCK_WAIT_MS / 1000} s`);
      // Jittered, so that waiters do not all retry at once.
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
    }
    try {
      return await work();
    } finally {
      const held = await this.objects.readJson<Lock>(`${folder}/lock.json`).catch(() => null);
      if (held?.id === lock.id) await this.objects.removeAll(folder).catch(() => undefined);
    }
  }
}
