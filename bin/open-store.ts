import type { StorageConfig } from '../config.ts';
import { JobStore } from '../store/job-store.ts';

/**
 * The job store STORAGE_URL names, checked before anything else starts: a store that cannot be
 * used (no bucket, bad credentials, unreachable, no httpfs) stops the process with one clear line
 * instead of failing every job later.
 */
export async function openCheckedJobStore(storage: StorageConfig): Promise<JobStore> {
  const store = JobStore.open(storage);
  try {
    await store.check();
  } catch (error) {
    console.error(`Cannot start: ${(error as Error).message}`);
    process.exit(1);
  }
  return store;
}
