import { createHash } from 'node:crypto';
import { BetaQuery } from '../engine/beta/query-schema.ts';
import type { BetaQuery as ParsedBetaQuery } from '../engine/beta/query-fields.ts';
import { resolveBetaQuery } from '../engine/beta/resolved-query.ts';
import type { JobStore } from '../store/job-store.ts';
import type { JobMeta, StoredBetaSources } from '../store/layout.ts';
import { alertCrossed, type RunStatus, type ScheduledRunRecord } from '../store/schedule-records.ts';
import { sendWebhook, type RunSummary } from './schedule-webhook.ts';

/**
 * A scheduled run's steps around its job: make an ordinary beta job from the schedule's stored
 * query (its locators are read afresh when the job plans), then record how the run ended, with
 * its pooled accuracy, and tell the schedule's webhook. Each step is safe to repeat.
 */

export interface ScheduleDependencies {
  store: JobStore;
  /** SCHEDULE_WEBHOOK_HOSTS: checked again at sending, so a host the operator removed is never called. */
  webhookHosts: readonly string[];
}

/** How a run's job ended, as the workflow saw its child end. */
export interface RunOutcome {
  status: Exclude<RunStatus, 'in_progress'>;
  error?: { code: string; message: string };
}

/** The same workflow id always gives the same job id, so a retried start finds the job it made. */
export function runJobId(workflowId: string): string {
  const hex = createHash('sha256').update(`scheduled-run:${workflowId}`).digest('hex');
  // Shaped as a version 4, variant 1 UUID, the form every job id has.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 3) | 8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A scheduled query's sources: locators only (the API refuses uploaded parts in a schedule). */
function locatorSources(query: ParsedBetaQuery): StoredBetaSources {
  const locator = (source: unknown) => {
    if (typeof source !== 'string') throw new Error('a scheduled query reads locators only');
    return { locator: source };
  };
  return { input: locator(query.input.source), covariates: (query.covariates ?? []).map((c) => locator(c.schema.source)) };
}

export function createScheduleActivities({ store, webhookHosts }: ScheduleDependencies) {
  return {
    /**
     * Makes the run's job; null when the schedule was deleted before this run made it. The job is
     * whole once its metadata exists, so a retry after that returns it as it is, deleted schedule
     * or not: a job made is a run already made, which a deletion leaves. Its run record is written
     * only while the schedule stands (writeRun takes it back otherwise).
     */
    async startScheduledRun(scheduleId: string, workflowId: string, scheduledAt: string): Promise<{ jobId: string } | null> {
      const jobId = runJobId(workflowId);
      if (!(await store.meta(jobId))) {
        const schedule = await store.schedules.get(scheduleId);
        if (!schedule) return null;
        const parsed = BetaQuery.parse(schedule.query);
        const meta: JobMeta = {
          job_id: jobId,
          kind: 'beta',
          principal: schedule.principal,
          model: schedule.model,
          created_at: new Date().toISOString(),
          series: null,
          forecasts: null,
          quantiles: [...resolveBetaQuery(parsed).levels],
          schedule: { schedule_id: scheduleId, scheduled_at: scheduledAt },
        };
        await store.beta.create(meta, schedule.query, locatorSources(parsed), []);
      }
      const run = await store.schedules.run(scheduleId, jobId);
      if (!run)
        await store.schedules.writeRun(scheduleId, { job_id: jobId, scheduled_at: scheduledAt, started_at: new Date().toISOString(), status: 'in_progress' });
      return { jobId };
    },

    /** Records how the run ended; returns its summary when the schedule has a webhook to tell. */
    async finishScheduledRun(scheduleId: string, jobId: string, outcome: RunOutcome): Promise<RunSummary | null> {
      const [schedule, run, meta] = await Promise.all([store.schedules.get(scheduleId), store.schedules.run(scheduleId, jobId), store.meta(jobId)]);
      if (!run || !meta) return null;
      const metrics = outcome.status === 'completed' ? await store.accuracy(meta) : undefined;
      const alert = schedule?.alert ?? null;
      const crossing = alert && metrics && alertCrossed(alert, metrics);
      const ended: ScheduledRunRecord = {
        ...run,
        status: outcome.status,
        finished_at: run.finished_at ?? new Date().toISOString(),
        ...(outcome.error && { error: outcome.error }),
        ...(metrics && { metrics }),
        ...(alert && metrics && { alerted: Boolean(crossing) }),
      };
      await store.schedules.writeRun(scheduleId, ended);
      if (!schedule?.webhook) return null;
      return {
        event: 'scheduled_run.finished',
        schedule_id: scheduleId,
        job_id: jobId,
        model: meta.model,
        scheduled_at: ended.scheduled_at,
        started_at: ended.started_at,
        finished_at: ended.finished_at!,
        status: outcome.status,
        error: ended.error ?? null,
        metrics: ended.metrics ?? [],
        alert: alert && { ...alert, crossed: Boolean(crossing) },
      };
    },

    /** Posts the summary to the schedule's webhook, signed; a failure is retried by the workflow's policy. */
    async notifyWebhook(scheduleId: string, summary: RunSummary): Promise<void> {
      const schedule = await store.schedules.get(scheduleId);
      if (!schedule?.webhook) return;
      await sendWebhook(schedule.webhook, summary, webhookHosts);
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
