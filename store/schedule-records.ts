import { isJobId } from './layout.ts';
import type { ObjectStore } from './object-store.ts';
import type { AccuracyRow, MetricName } from './result-queries.ts';
import { withStoreLock } from './store-lock.ts';

/**
 * Scheduled backtests in the job store, where every API replica and worker reads them. Temporal
 * holds each schedule's timing; the store holds what a run needs (the query, the model, the
 * webhook) and a record of every run it started. A schedule's id is a UUID, like a job's.
 */
export const SCHEDULES = 'schedules';
const scheduleFolder = (id: string) => `${SCHEDULES}/${id}`;
/** `schedules/<id>/schedule.json`: the schedule as its owner last set it. */
const recordKey = (id: string) => `${scheduleFolder(id)}/schedule.json`;
const runsFolder = (id: string) => `${scheduleFolder(id)}/runs`;
/** `schedules/<id>/runs/<job_id>.json`: one run, written when it starts and again when it ends. */
const runKey = (id: string, jobId: string) => `${runsFolder(id)}/${jobId}.json`;
/** `schedules/<id>/lock/lock.json`: held while one process changes, triggers or removes the schedule (store/store-lock.ts). */
const lockFolder = (id: string) => `${scheduleFolder(id)}/lock`;

/** When runs happen, as the owner wrote it (Temporal's own form is derived from it). */
export interface StoredScheduleSpec {
  cron?: string[];
  /** An ISO 8601 duration. */
  interval?: string;
  time_zone: string;
  start_at?: string;
  end_at?: string;
}

/** A pooled metric that, above a threshold, marks a run as degraded. */
export interface StoredAlert {
  metric: string;
  above: number;
}

export interface ScheduleRecord {
  schedule_id: string;
  principal: string;
  model: string;
  /** The beta query as sent: its sources are locators, read afresh by every run. */
  query: unknown;
  spec: StoredScheduleSpec;
  overlap: string;
  /** An ISO 8601 duration. */
  catch_up_window: string;
  /** As its owner last set it; Temporal's schedule follows it. */
  paused: boolean;
  webhook: { url: string; secret: string } | null;
  alert: StoredAlert | null;
  created_at: string;
  updated_at: string;
}

export type RunStatus = 'in_progress' | 'completed' | 'failed';

export interface ScheduledRunRecord {
  job_id: string;
  /** The time Temporal scheduled the run for (a trigger's: when it was asked). */
  scheduled_at: string;
  /** When the run's job was made. */
  started_at: string;
  status: RunStatus;
  finished_at?: string;
  error?: { code: string; message: string };
  /** Pooled accuracy per model and target, once the run completed. */
  metrics?: AccuracyRow[];
  /** Whether the schedule's alert metric crossed its threshold in this run. */
  alerted?: boolean;
}

export class ScheduleRecords {
  constructor(private readonly objects: ObjectStore) {}

  /** Stores a new schedule; false when one with this id exists already. */
  create(record: ScheduleRecord): Promise<boolean> {
    return this.objects.createJson(recordKey(record.schedule_id), record);
  }

  get(id: string): Promise<ScheduleRecord | null> {
    return isJobId(id) ? this.objects.readJson<ScheduleRecord>(recordKey(id)) : Promise.resolve(null);
  }

  async update(record: ScheduleRecord): Promise<void> {
    await this.objects.writeJson(recordKey(record.schedule_id), record);
  }

  /** Every schedule of the principal, oldest first. */
  async list(principal: string): Promise<ScheduleRecord[]> {
    return (await this.all()).filter((r) => r.principal === principal);
  }

  /** Every principal's schedules, oldest first. */
  async all(): Promise<ScheduleRecord[]> {
    const ids = (await this.objects.children(SCHEDULES)).filter(isJobId);
    const records = await Promise.all(ids.map((id) => this.objects.readJson<ScheduleRecord>(recordKey(id))));
    return records
      .filter((r): r is ScheduleRecord => r !== null)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.schedule_id.localeCompare(b.schedule_id));
  }

  /**
   * Removes the schedule and its run records; the runs' jobs and results stay. The record goes
   * first: a run written after that finds it gone and takes itself back (writeRun); one written
   * before is in the folder when it is removed.
   */
  async remove(id: string): Promise<void> {
    await this.objects.removeAll(recordKey(id));
    await this.objects.removeAll(scheduleFolder(id));
  }

  /**
   * Runs `work` holding the schedule's lock, which every process sharing the store takes in turn;
   * `StoreLockBusyError` when it stays busy.
   */
  locked<T>(id: string, work: () => Promise<T>): Promise<T> {
    return withStoreLock(this.objects, lockFolder(id), 'this schedule', work);
  }

  /**
   * Writes a run's record; false, and nothing left, when its schedule was removed meanwhile. A
   * run that starts or ends as its schedule is deleted would otherwise leave a record that no
   * listing reads, under a schedule that is gone.
   */
  async writeRun(scheduleId: string, run: ScheduledRunRecord): Promise<boolean> {
    await this.objects.writeJson(runKey(scheduleId, run.job_id), run);
    if (await this.objects.exists(recordKey(scheduleId))) return true;
    await this.objects.removeAll(scheduleFolder(scheduleId));
    return false;
  }

  async run(scheduleId: string, jobId: string): Promise<ScheduledRunRecord | null> {
    return this.objects.readJson<ScheduledRunRecord>(runKey(scheduleId, jobId));
  }

  /** The schedule's runs, newest scheduled first. */
  async runs(scheduleId: string): Promise<ScheduledRunRecord[]> {
    const names = (await this.objects.children(runsFolder(scheduleId))).filter((n) => n.endsWith('.json'));
    const runs = await Promise.all(names.map((n) => this.objects.readJson<ScheduledRunRecord>(`${runsFolder(scheduleId)}/${n}`)));
    return runs.filter((r): r is ScheduledRunRecord => r !== null).sort((a, b) => b.scheduled_at.localeCompare(a.scheduled_at));
  }
}

/** Whether any model and target's pooled metric is above the alert's threshold. */
export function alertCrossed(alert: StoredAlert, metrics: readonly AccuracyRow[]): boolean {
  return metrics.some((row) => (row[alert.metric as MetricName] ?? -Infinity) > alert.above);
}
