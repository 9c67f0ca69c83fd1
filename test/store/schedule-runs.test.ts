import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createScheduleActivities } from '../../activities/scheduled-runs.ts';
import { JobStore } from '../../store/job-store.ts';
import type { ScheduleRecord, ScheduledRunRecord } from '../../store/schedule-records.ts';
import { tempDir } from '../beta/helpers.ts';
import { query } from '../jobs/schedule-helpers.ts';
import { startMinio, type Minio } from './minio.ts';

/**
 * A scheduled run that starts or ends as its schedule is deleted, in a local folder and in a real
 * bucket: its record never outlives the schedule, and a run whose job was already made keeps it
 * (a deletion leaves the runs it made). Without Temporal: the run's activities are called as a
 * retry would call them.
 */

const record = (id: string): ScheduleRecord => ({
  schedule_id: id,
  principal: 'alice',
  model: 'naive',
  query: query('daily/*.parquet'),
  spec: { interval: 'PT1H', time_zone: 'UTC' },
  overlap: 'skip',
  catch_up_window: 'P1D',
  paused: false,
  webhook: null,
  alert: null,
  created_at: '2026-11-29T00:00:00.000Z',
  updated_at: '2026-11-29T00:00:00.000Z',
});

const running = (jobId: string): ScheduledRunRecord => ({
  job_id: jobId,
  scheduled_at: '2026-11-29T01:00:00.000Z',
  started_at: '2026-11-29T01:00:01.000Z',
  status: 'in_progress',
});

/** The checks, on `store`; `leftover(id)` tells whether anything of schedule `id` is still stored. */
function runChecks(open: () => { store: JobStore; leftover?: (id: string) => boolean }) {
  test('a run written after its schedule was removed is taken back', async () => {
    const { store, leftover } = open();
    const id = randomUUID();
    await store.schedules.create(record(id));
    const kept = await store.schedules.writeRun(id, running(randomUUID()));
    await store.schedules.remove(id);
    const late = await store.schedules.writeRun(id, running(randomUUID()));
    expect(await store.schedules.runs(id)).toEqual([]);
    expect(leftover?.(id) ?? false).toBe(false);
    expect([kept, late]).toEqual([true, false]);
  });

  test('a retried start keeps the job it made before the deletion, and writes no run record', async () => {
    const { store } = open();
    const activities = createScheduleActivities({ store, webhookHosts: [] });
    const id = randomUUID();
    await store.schedules.create(record(id));
    const made = await activities.startScheduledRun(id, `run-${id}`, '2026-11-29T01:00:00.000Z');
    expect(made).not.toBeNull();
    expect((await store.schedules.runs(id)).map((run) => run.job_id)).toEqual([made!.jobId]);

    await store.schedules.remove(id);
    expect(await activities.startScheduledRun(id, `run-${id}`, '2026-11-29T01:00:00.000Z')).toEqual(made);
    expect((await store.meta(made!.jobId))?.schedule?.schedule_id).toBe(id);
    expect(await store.schedules.runs(id)).toEqual([]);
    // A run its schedule never made a job for does not start; one ending after the deletion records nothing.
    expect(await activities.startScheduledRun(id, `other-${id}`, '2026-11-29T02:00:00.000Z')).toBeNull();
    expect(await activities.finishScheduledRun(id, made!.jobId, { status: 'completed' })).toBeNull();
    expect(await store.schedules.runs(id)).toEqual([]);
  });
}

describe('scheduled runs of a deleted schedule, in a local folder', () => {
  const dir = tempDir('schedule-runs-');
  const store = JobStore.local(dir);
  runChecks(() => ({ store, leftover: (id) => fs.existsSync(path.join(dir, 'schedules', id)) }));
});

describe('scheduled runs of a deleted schedule, in a bucket', () => {
  let minio: Minio;
  let store: JobStore;
  beforeAll(async () => {
    minio = await startMinio();
    await minio.createBucket('schedule-runs');
    store = JobStore.open(minio.storage('schedule-runs', 'service/'));
  }, 120_000);
  afterAll(async () => {
    store?.close();
    await minio?.dispose();
  });
  runChecks(() => ({ store }));
});
