import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { JobStore } from '../../store/job-store.ts';
import { tempDir } from '../beta/helpers.ts';
import { startMinio, type Minio } from './minio.ts';

/**
 * The job store's per-principal lock (the concurrent-jobs quota counts and takes a place under
 * it) under contention, in a local folder and in a real bucket: submissions racing for it take
 * it one at a time, and none fails because another released it at the same moment (a local
 * folder's lock is a folder, removed on release while others create their lock in it).
 */

async function contend(store: JobStore, rounds: number, racers: number) {
  let inside = 0;
  let mostInside = 0;
  let entered = 0;
  const failures: string[] = [];
  for (let round = 0; round < rounds; round++) {
    await Promise.all(
      Array.from({ length: racers }, () =>
        store.activeJobs
          .locked('racer', async () => {
            inside += 1;
            entered += 1;
            mostInside = Math.max(mostInside, inside);
            await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
            inside -= 1;
          })
          .catch((error: Error) => failures.push(error.message)),
      ),
    );
  }
  return { mostInside, entered, failures };
}

describe('the per-principal lock under contention', () => {
  let minio: Minio;
  beforeAll(async () => {
    minio = await startMinio();
    await minio.createBucket('locks');
  }, 120_000);
  afterAll(async () => {
    await minio?.dispose();
  });

  test('in a local folder: 8 racers x 100 rounds, one holder at a time, no failures', async () => {
    const result = await contend(JobStore.local(tempDir('locks-')), 100, 8);
    expect(result).toEqual({ mostInside: 1, entered: 800, failures: [] });
  }, 120_000);

  test('in a bucket: 8 racers x 15 rounds, one holder at a time, no failures', async () => {
    const store = JobStore.open(minio.storage('locks', 'service/'));
    try {
      const result = await contend(store, 15, 8);
      expect(result).toEqual({ mostInside: 1, entered: 120, failures: [] });
    } finally {
      store.close();
    }
  }, 120_000);
});
