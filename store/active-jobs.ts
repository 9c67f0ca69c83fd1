import { createHash } from 'node:crypto';
import { isJobId } from './layout.ts';
import type { ObjectStore } from './object-store.ts';
import { withStoreLock } from './store-lock.ts';

/**
 * Which jobs of a principal may still be in progress, for the concurrent-jobs quota, in the job
 * store so that every API process sharing it counts the same jobs. Entries are pruned by whoever
 * counts (asking Temporal), and a per-principal lock makes counting and adding one step:
 * docs/decisions/027-quotas-checked-before-storing.md.
 */
export const ACTIVE_JOBS = 'active-jobs';

const principalKey = (principal: string) => `${ACTIVE_JOBS}/${createHash('sha256').update(principal).digest('hex')}`;
// A folder per job, so that removing one entry is removing a prefix, the same on disk and in a bucket.
const jobKey = (principal: string, jobId: string) => `${principalKey(principal)}/${jobId}`;
/** `active-jobs/<sha256(principal)>/<job_id>/entry.json`: { created_at }, written before the job's workflow starts. */
const entryKey = (principal: string, jobId: string) => `${jobKey(principal, jobId)}/entry.json`;
/** `.../lock/lock.json`: held while one submission counts and adds its entry; `.../lock/replaced-<id>.json`: who took over an expired lock. */
const lockFolder = (principal: string) => `${principalKey(principal)}/lock`;

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

  /** Runs `work` holding the principal's lock (store/store-lock.ts); `StoreLockBusyError` when it stays busy. */
  locked<T>(principal: string, work: () => Promise<T>): Promise<T> {
    return withStoreLock(this.objects, lockFolder(principal), "this principal's jobs", work);
  }
}
