import type { StorageConfig } from '../config.ts';
import { JobStore } from '../store/job-store.ts';
import { importLegacyKeys, legacyKeysFile } from '../store/legacy-keys.ts';
import { cannotStart } from './start-up.ts';

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
    cannotStart(error);
  }
  return store;
}

/**
 * Imports the API keys of an old `DATA_DIR/keys.duckdb` into the job store, where every replica
 * reads them (store/legacy-keys.ts); again at every start, which changes nothing once done. A file
 * that cannot be read stops the start: its keys would otherwise be refused without a word.
 */
export async function importLegacyKeysAtStart(dataDir: string, store: JobStore): Promise<void> {
  try {
    const imported = await importLegacyKeys(dataDir, store.apiKeys);
    if (imported > 0) console.log(`imported ${imported} API key(s) from ${legacyKeysFile(dataDir)} into the job store ${store.url}`);
  } catch (error) {
    cannotStart(error);
  }
}
