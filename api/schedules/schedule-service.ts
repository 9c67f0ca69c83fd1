import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy, type ScheduleOptions, type ScheduleOptionsAction } from '@temporalio/client';
import type { ScheduleConfig } from '../../config.ts';
import { webhookRefusal } from '../../engine/beta/webhook-url.ts';
import { parseDuration } from '../../engine/beta/duration.ts';
import { parseTimestamp } from '../../engine/time-index.ts';
import { alertCrossed, type ScheduleRecord, type StoredScheduleSpec } from '../../store/schedule-records.ts';
import { StoreLockBusyError } from '../../store/store-lock.ts';
import type { ScheduledRunArgs } from '../../workflows/scheduled-run.ts';
import type { JobService } from '../jobs/job-service.ts';
import { HttpError } from '../problem.ts';
import { scheduleBusy, schedulesExceeded, tooManySubmissionsAtOnce } from '../quotas.ts';
import type { ScheduledRun, ScheduleResponse, ScheduleSpec } from '../schemas/schedules.ts';

/**
 * Scheduled backtests on Temporal Schedules (docs/decisions/060-scheduled-backtests.md). The
 * schedule record in the job store is the truth every replica reads; Temporal's schedule is made
 * from it and does the timing. A record whose Temporal schedule is gone (a new cluster) gets it
 * back the next time it is read, so no schedule is lost with Temporal's state.
 */

const WORKFLOW_TYPE = 'scheduledBetaRun';
/** How long a trigger waits for the scheduler to take it before it lets the next one go (the scheduler takes one in milliseconds). */
const TRIGGER_TAKEN_MS = 10_000;
const TRIGGER_POLL_MS = 50;
/** How far from a due run's time a trigger waits to be taken: its second, and as much again for the replicas' clocks. */
const CLEAR_OF_DUE_RUN_MS = 2_000;
const toMs = (text: string) => parseTimestamp(text)!.time.toMillis();
const fixedMs = (text: string) => {
  const d = parseDuration(text);
  return d?.kind === 'fixed' ? d.ms : 0;
};

/** What a client may set on a schedule, checked against its model and sources by the caller. */
export type ScheduleInput = Pick<ScheduleRecord, 'model' | 'query' | 'overlap' | 'catch_up_window' | 'paused' | 'alert'> & {
  spec: ScheduleSpec;
  webhook: { url: string; secret?: string } | null;
};

export class ScheduleService {
  constructor(
    private readonly jobs: JobService,
    private readonly settings: ScheduleConfig,
  ) {}

  private get store() {
    return this.jobs.store.schedules;
  }

  private handle(id: string) {
    return this.jobs.client.schedule.getHandle(id);
  }

  /** The record, if it exists and belongs to the principal (404 and 403 otherwise). */
  async record(id: string, principal: string): Promise<ScheduleRecord> {
    const record = await this.store.get(id);
    if (!record) throw new HttpError(404, 'not_found', `no schedule '${id}'`);
    if (record.principal !== principal) throw new HttpError(403, 'forbidden', `schedule '${id}' belongs to another principal`);
    return record;
  }

  /** 422 naming `body.webhook.url` when the server may not call it. */
  checkWebhook(url: string): void {
    const refusal = webhookRefusal(url, this.settings.webhookHosts);
    if (refusal) throw new HttpError(422, 'invalid_request', `the webhook URL ${refusal}`, [{ path: 'body.webhook.url', message: refusal }]);
  }

  /** Makes a schedule (its record, then its Temporal schedule); the principal's schedules quota is counted under its lock. */
  async create(principal: string, input: ScheduleInput, limit: number, id: string = randomUUID()): Promise<ScheduleResponse> {
    const now = new Date().toISOString();
    const { webhook, secret } = withSecret(input.webhook);
    const record: ScheduleRecord = { schedule_id: id, principal, ...input, spec: storedSpec(input.spec), webhook, created_at: now, updated_at: now };
    try {
      await this.jobs.store.activeJobs.locked(principal, async () => {
        if (limit > 0 && (await this.store.list(principal)).length >= limit) throw schedulesExceeded(limit);
        await this.store.create(record);
      });
    } catch (err) {
      if (err instanceof StoreLockBusyError) throw tooManySubmissionsAtOnce('its schedules');
      throw err;
    }
    try {
      await this.jobs.temporal(() => this.jobs.client.schedule.create(this.temporalOptions(record)));
    } catch (err) {
      // Another replica that read the new record (listing the principal's schedules) made it first.
      if (!(err instanceof ScheduleAlreadyRunning)) {
        await this.store.remove(id).catch(() => undefined);
        throw temporalRefusal(err);
      }
    }
    return this.describe(record, secret);
  }

  async get(id: string, principal: string): Promise<ScheduleResponse> {
    return this.describe(await this.record(id, principal));
  }

  /**
   * A create's answer again, for a retry with its Idempotency-Key: a secret the server made is in
   * it, as in the first answer, which the client may never have received.
   */
  async replayCreate(id: string, principal: string, secretWasMade: boolean): Promise<ScheduleResponse> {
    const record = await this.record(id, principal);
    return this.describe(record, secretWasMade ? record.webhook?.secret : undefined);
  }

  /**
   * Makes sure every stored schedule has its Temporal schedule, as a read of it would: one that
   * Temporal lost (a new cluster, a restored database) fires again without waiting for a read.
   * Returns the schedules it could not reach, with why; the others are in place.
   */
  async ensureAll(): Promise<{ scheduleId: string; error: unknown }[]> {
    const failed: { scheduleId: string; error: unknown }[] = [];
    for (const record of await this.store.all()) {
      await this.ensure(record).catch((error: unknown) => {
        // Deleted meanwhile: nothing to put back.
        if (!(error instanceof HttpError && error.status === 404)) failed.push({ scheduleId: record.schedule_id, error });
      });
    }
    return failed;
  }

  /** The principal's schedules; one deleted while they are read is left out. */
  async list(principal: string): Promise<ScheduleResponse[]> {
    const gone = (err: unknown) => {
      if (err instanceof HttpError && err.status === 404) return null;
      throw err;
    };
    const described = await Promise.all((await this.store.list(principal)).map((r) => this.describe(r).catch(gone)));
    return described.filter((d): d is ScheduleResponse => d !== null);
  }

  /**
   * Changes a schedule: `change` gives its new settings from the record as it is (and checks them).
   * Under the schedule's lock, so that no replica's change or removal lands between its reading
   * and its writing.
   */
  async update(id: string, principal: string, change: (before: ScheduleRecord) => ScheduleInput): Promise<ScheduleResponse> {
    const { record, secret } = await this.locked(id, principal, async (before) => {
      const input = change(before);
      const { webhook, secret } = withSecret(input.webhook);
      const record: ScheduleRecord = { ...before, ...input, spec: storedSpec(input.spec), webhook, updated_at: new Date().toISOString() };
      await this.ensure(before);
      try {
        const options = this.temporalOptions(record);
        // The new paused state travels in the update itself: a separate pause or unpause could be
        // applied before the update, which would then restore the old state.
        await this.jobs.temporal(() =>
          this.handle(id).update((previous) => ({
            ...previous,
            spec: options.spec,
            action: options.action,
            policies: options.policies,
            state: { ...previous.state, ...options.state },
          })),
        );
      } catch (err) {
        throw temporalRefusal(err);
      }
      await this.store.update(record);
      return { record, secret };
    });
    return this.describe(record, secret);
  }

  /**
   * Starts a run now, beside any running one. Temporal names a triggered run by the second its
   * scheduler takes the trigger, as it names a due run by its due second, and refuses, without a
   * word to the caller, a run named as one it has started: a second trigger within the same
   * second would answer 202 and start nothing. So a schedule's triggers take its lock in the job
   * store in turn, whichever replica gets them; each keeps clear of a due run's second, and holds
   * the lock until the scheduler has taken it and a whole second more.
   */
  async trigger(id: string, principal: string): Promise<void> {
    const handle = this.handle(id);
    await this.locked(id, principal, async (record) => {
      const { info, state } = await this.ensure(record);
      const dueNear = [state.paused ? undefined : info.nextActionTimes[0], info.recentActions.at(-1)?.scheduledAt]
        .map((time) => time?.getTime() ?? -Infinity)
        .filter((time) => Math.abs(time - Date.now()) < CLEAR_OF_DUE_RUN_MS);
      if (dueNear.length > 0) await sleep(Math.max(...dueNear) + CLEAR_OF_DUE_RUN_MS - Date.now());
      const before = (await this.jobs.temporal(() => handle.describe())).info.numActionsTaken;
      await this.jobs.temporal(() => handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL));
      // Counting the actions, rather than comparing clocks, keeps replicas with skewed clocks apart.
      const deadline = Date.now() + TRIGGER_TAKEN_MS;
      while ((await this.jobs.temporal(() => handle.describe())).info.numActionsTaken <= before && Date.now() < deadline) await sleep(TRIGGER_POLL_MS);
      await sleep(1_000);
    });
  }

  /**
   * Removes the Temporal schedule and the record, under the schedule's lock; runs already made and
   * their jobs stay. A replica reading the record just before it went may make Temporal's
   * schedule again (ensure): it finds the record gone and removes it, and the second delete here
   * catches one made before that replica looked.
   */
  async remove(id: string, principal: string): Promise<void> {
    await this.locked(id, principal, async () => {
      await this.deleteTemporal(id);
      await this.store.remove(id);
    });
    await this.deleteTemporal(id).catch(() => undefined);
  }

  private async deleteTemporal(id: string): Promise<void> {
    await this.jobs
      .temporal(() => this.handle(id).delete())
      .catch((err: unknown) => {
        if (!(err instanceof ScheduleNotFoundError)) throw err;
      });
  }

  /**
   * Runs `work` on the principal's record of the schedule, holding the schedule's lock in the job
   * store, which every replica takes in turn; 429 when it stays busy. The record is read before
   * the lock (404 and 403 at once; only a schedule's own id names a lock) and again under it, as
   * another replica may have changed or removed it meanwhile.
   */
  private async locked<T>(id: string, principal: string, work: (record: ScheduleRecord) => Promise<T>): Promise<T> {
    await this.record(id, principal);
    try {
      return await this.store.locked(id, async () => work(await this.record(id, principal)));
    } catch (err) {
      if (err instanceof StoreLockBusyError) throw scheduleBusy();
      throw err;
    }
  }

  /**
   * The schedule's runs, newest first. A run still recorded as running is read from its job, and
   * its pooled metrics computed, so a run never reads as completed without them.
   */
  async runs(id: string, principal: string): Promise<ScheduledRun[]> {
    const record = await this.record(id, principal);
    return Promise.all(
      (await this.store.runs(id)).map(async (run) => {
        const live = run.status === 'in_progress' ? await this.jobs.state(run.job_id) : null;
        const meta = live?.status === 'completed' ? await this.jobs.store.meta(run.job_id) : null;
        const metrics = meta ? await this.jobs.store.accuracy(meta) : (run.metrics ?? []);
        const alert = record.alert;
        const alerted = meta && alert ? alertCrossed(alert, metrics) : (run.alerted ?? null);
        return {
          job_id: run.job_id,
          scheduled_at: run.scheduled_at,
          started_at: run.started_at,
          finished_at: run.finished_at ?? null,
          status: live?.status ?? run.status,
          error: live?.status === 'failed' ? live.error : (run.error ?? null),
          metrics,
          alerted,
        };
      }),
    );
  }

  /**
   * Temporal's schedule of a record, made again when Temporal no longer has it. Another replica
   * reading the same record may make it first: then it is there to read.
   */
  private async ensure(record: ScheduleRecord) {
    try {
      return await this.jobs.temporal(() => this.handle(record.schedule_id).describe());
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      await this.jobs
        .temporal(() => this.jobs.client.schedule.create(this.temporalOptions(record)))
        .catch((error: unknown) => {
          if (!(error instanceof ScheduleAlreadyRunning)) throw error;
        });
      // A replica removing the schedule meanwhile leaves no record: the schedule made here goes too.
      if (!(await this.store.get(record.schedule_id))) {
        await this.deleteTemporal(record.schedule_id);
        throw new HttpError(404, 'not_found', `no schedule '${record.schedule_id}'`);
      }
      return this.jobs.temporal(() => this.handle(record.schedule_id).describe());
    }
  }

  private async describe(record: ScheduleRecord, newSecret?: string): Promise<ScheduleResponse> {
    const description = await this.ensure(record);
    return {
      schedule_id: record.schedule_id,
      model: record.model,
      query: record.query,
      spec: record.spec,
      overlap: record.overlap as ScheduleResponse['overlap'],
      catch_up_window: record.catch_up_window,
      paused: description.state.paused,
      webhook: record.webhook && { url: record.webhook.url, ...(newSecret && { secret: newSecret }) },
      alert: record.alert as ScheduleResponse['alert'],
      created_at: record.created_at,
      updated_at: record.updated_at,
      next_runs: description.state.paused ? [] : description.info.nextActionTimes.map((t) => t.toISOString()),
      overlap_skipped: description.info.numActionsSkippedOverlap,
    };
  }

  private temporalOptions(record: ScheduleRecord): ScheduleOptions<ScheduleOptionsAction> {
    const { spec } = record;
    const args: ScheduledRunArgs = {
      scheduleId: record.schedule_id,
      job: { parallelism: this.jobs.config.parallelism, heartbeatTimeoutMs: this.jobs.config.heartbeatTimeoutMs, chunksPerRun: this.jobs.config.chunksPerRun },
    };
    return {
      scheduleId: record.schedule_id,
      spec: {
        ...(spec.cron && { cronExpressions: spec.cron }),
        ...(spec.interval && { intervals: [{ every: fixedMs(spec.interval) }] }),
        timezone: spec.time_zone,
        ...(spec.start_at && { startAt: new Date(toMs(spec.start_at)) }),
        ...(spec.end_at && { endAt: new Date(toMs(spec.end_at)) }),
      },
      action: {
        type: 'startWorkflow',
        workflowType: WORKFLOW_TYPE,
        taskQueue: this.jobs.config.taskQueue,
        workflowId: `scheduled-run-${record.schedule_id}`,
        args: [args],
      },
      policies: { overlap: record.overlap.toUpperCase() as ScheduleOverlapPolicy, catchupWindow: fixedMs(record.catch_up_window) },
      state: { paused: record.paused, note: record.paused ? 'paused by its owner' : undefined },
    };
  }
}

const storedSpec = (spec: ScheduleSpec): StoredScheduleSpec => ({
  ...(spec.cron !== undefined && { cron: typeof spec.cron === 'string' ? [spec.cron] : spec.cron }),
  ...(spec.interval !== undefined && { interval: spec.interval }),
  time_zone: spec.time_zone,
  ...(spec.start_at !== undefined && { start_at: spec.start_at }),
  ...(spec.end_at !== undefined && { end_at: spec.end_at }),
});

/** The webhook as stored: a URL given without a secret gets one made here, returned once to its owner. */
function withSecret(webhook: ScheduleInput['webhook']): { webhook: ScheduleRecord['webhook']; secret?: string } {
  if (!webhook) return { webhook: null };
  if (webhook.secret) return { webhook: { url: webhook.url, secret: webhook.secret } };
  const secret = randomBytes(32).toString('base64url');
  return { webhook: { url: webhook.url, secret }, secret };
}

/**
 * Temporal's refusal of a spec it cannot take (a bad cron expression) is the client's error: the
 * SDK turns the server's INVALID_ARGUMENT into a TypeError carrying the server's reason.
 */
function temporalRefusal(err: unknown): unknown {
  if (!(err instanceof TypeError)) return err;
  const message = `the scheduler cannot take this spec: ${err.message}`;
  return new HttpError(422, 'invalid_request', message, [{ path: 'body.spec', message }]);
}
