import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  executeChild,
  isCancellation,
  patched,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { RunSummary } from '../activities/schedule-webhook.ts';
import type { RunOutcome, ScheduleActivities } from '../activities/scheduled-runs.ts';
import { forecastJob, type ForecastJobArgs } from './forecast-job.ts';

/**
 * One run of a scheduled backtest, started by its Temporal schedule: make the run's beta job,
 * run it as a child workflow (so the schedule's overlap policy sees the job running), record
 * how it ended, then tell the webhook. The job is an ordinary beta job: same endpoints, same
 * results. Only ids pass through here.
 *
 * The webhook's summary is delivered by a workflow of its own, which outlives the run: a receiver
 * that is down for a while is retried for about an hour, and the schedule's overlap policy must
 * not count those retries as the run still going (with `skip`, due runs were skipped).
 */

export interface ScheduledRunArgs {
  scheduleId: string;
  /** The job workflow's settings, as the API's job service starts jobs with. */
  job: Omit<ForecastJobArgs, 'jobId' | 'resume'>;
}

/** Set by Temporal on every workflow a schedule starts: the time it was scheduled for. */
const SCHEDULED_START = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

const { startScheduledRun, finishScheduledRun } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10 },
});

// A receiver that is down for a while still gets the summary; one that refuses it is not asked again.
const { notifyWebhook } = proxyActivities<ScheduleActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '10 minutes',
    maximumAttempts: 12,
    nonRetryableErrorTypes: ['webhook_refused'],
  },
});

/** The job's end as its poller reads it (api/jobs/job-service.ts): the same codes and messages. */
function outcomeOf(err: unknown): RunOutcome {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) return { status: 'failed', error: { code: cause.type ?? 'internal_error', message: cause.message } };
  if (cause instanceof CancelledFailure) return { status: 'failed', error: { code: 'cancelled', message: 'the job was cancelled' } };
  if (cause instanceof TerminatedFailure) return { status: 'failed', error: { code: 'terminated', message: 'the job was terminated by an operator' } };
  if (cause instanceof TimeoutFailure) return { status: 'failed', error: { code: 'timed_out', message: 'the job ran past its time limit' } };
  return { status: 'failed', error: { code: 'internal_error', message: (cause as Error | undefined)?.message ?? 'the job failed' } };
}

/** Delivers a finished run's summary to its schedule's webhook, with the retries above. */
export async function scheduledRunSummary(scheduleId: string, summary: RunSummary): Promise<void> {
  await notifyWebhook(scheduleId, summary);
}

/** Hands the summary to a workflow that outlives the run; runs recorded before that change called the webhook themselves. */
async function deliver(scheduleId: string, summary: RunSummary): Promise<void> {
  if (!patched('webhook-outlives-run')) return notifyWebhook(scheduleId, summary);
  await startChild(scheduledRunSummary, {
    workflowId: `${workflowInfo().workflowId}-webhook`,
    args: [scheduleId, summary],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    cancellationType: ChildWorkflowCancellationType.ABANDON,
  });
}

export async function scheduledBetaRun(args: ScheduledRunArgs): Promise<void> {
  const info = workflowInfo();
  const scheduledAt = info.typedSearchAttributes.get(SCHEDULED_START) ?? info.startTime;
  const run = await startScheduledRun(args.scheduleId, info.workflowId, scheduledAt.toISOString());
  if (!run) return;
  let outcome: RunOutcome = { status: 'completed' };
  try {
    await executeChild(forecastJob, { workflowId: run.jobId, args: [{ jobId: run.jobId, ...args.job }] });
  } catch (err) {
    outcome = outcomeOf(err);
    // This run cancelled (the overlap policy, an operator): its end is still recorded, then it ends cancelled.
    if (isCancellation(err) && CancellationScope.current().consideredCancelled) {
      await CancellationScope.nonCancellable(async () => {
        const summary = await finishScheduledRun(args.scheduleId, run.jobId, outcome);
        // A run the overlap policy cancelled is reported too; before runs delivered on their own, it was not.
        if (summary && patched('webhook-outlives-run')) await deliver(args.scheduleId, summary);
      });
      throw err;
    }
  }
  const summary = await finishScheduledRun(args.scheduleId, run.jobId, outcome);
  if (summary) await deliver(args.scheduleId, summary);
}
