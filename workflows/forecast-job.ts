import { ActivityFailure, ApplicationFailure, continueAsNew, defineQuery, isCancellation, proxyActivities, setHandler } from '@temporalio/workflow';
import type { JobActivities, JobPlan } from '../activities/forecast-job.ts';

/**
 * One workflow per job (forecast or beta, the activities tell them apart): plan chunks, run them with bounded parallelism, summarise.
 * Only ids and counts pass through here; the data stays in the job store. A run starts at most
 * `chunksPerRun` chunks, then continues as new with the plan and its progress, so each run's
 * history stays bounded however large the job. A beta job whose plan says it reconciles then
 * reconciles each cutoff, one activity each, under the same bounds; no other job comes near that
 * step, so their workflows issue the commands they always did.
 */

export interface ForecastJobArgs {
  jobId: string;
  /** Chunks in flight at once, across every worker process. */
  parallelism: number;
  /** A worker silent this long is taken as dead and its chunk goes to another worker. */
  heartbeatTimeoutMs: number;
  /** Chunks one run starts before it continues as new (each costs a few history events). */
  chunksPerRun: number;
  /** Set when a run continues as new: the plan and what the earlier runs did (`nextCutoff`: a reconciling job's next cutoff). */
  resume?: { plan: JobPlan; nextChunk: number; done: number; chunksDone: number; nextCutoff?: number };
}

export interface JobProgress {
  done: number;
  total: number | null;
  chunksDone: number;
  chunks: number | null;
}

export const progressQuery = defineQuery<JobProgress>('progress');

const { summarizeJob } = proxyActivities<JobActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 5 },
});

/**
 * Ends the job with a failure its poller can read: an activity's deliberate failure (bad input,
 * model error) keeps its code and message; anything that exhausted its retries is an internal
 * error, in words of our own. A cancellation, even one that reached a running chunk, is rethrown
 * as is, so the job ends cancelled.
 */
export function jobFailure(err: unknown): never {
  if (isCancellation(err)) throw err;
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable && err.cause.type) {
    throw ApplicationFailure.nonRetryable(err.cause.message, err.cause.type, ...(err.cause.details ?? []));
  }
  // An unexpected error's own words may hold SQL, paths or addresses: the poller reads a plain
  // message, and the failure keeps the error as its cause, in the workflow's history for operators.
  if (err instanceof ActivityFailure) throw ApplicationFailure.create({ message: UNEXPECTED_FAILURE, type: 'internal_error', nonRetryable: true, cause: err });
  throw err;
}

export const UNEXPECTED_FAILURE = "the job failed on an unexpected error; its cause is kept in the job's workflow history, for the operators";

export async function forecastJob(args: ForecastJobArgs) {
  const progress: JobProgress = { done: args.resume?.done ?? 0, total: null, chunksDone: args.resume?.chunksDone ?? 0, chunks: null };
  setHandler(progressQuery, () => progress);
  // Planning a beta job runs its whole schema logic: it may take long, and beats like a chunk.
  const { planJob } = proxyActivities<JobActivities>({
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: args.heartbeatTimeoutMs,
    retry: { maximumAttempts: 5 },
  });
  const { runChunk, reconcileCutoff } = proxyActivities<JobActivities>({
    startToCloseTimeout: '1 hour',
    heartbeatTimeout: args.heartbeatTimeoutMs,
    retry: { initialInterval: '1 second', maximumInterval: '1 minute', maximumAttempts: 10 },
  });

  try {
    const plan = args.resume?.plan ?? (await planJob(args.jobId));
    progress.total = plan.forecasts;
    progress.chunks = plan.chunks;
    const first = args.resume?.nextChunk ?? 0;
    const end = Math.min(plan.chunks, first + Math.max(1, args.chunksPerRun));
    let next = first;
    const lane = async () => {
      while (next < end) {
        const chunk = next++;
        // Awaited first: `done += await ...` would add to the value read before the await, losing other lanes' progress.
        const forecasts = await runChunk(args.jobId, chunk);
        progress.done += forecasts;
        progress.chunksDone++;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(args.parallelism, end - first)) }, lane));
    if (end < plan.chunks) {
      // Thrown past the catch below unchanged (it is neither a cancellation nor an activity failure).
      await continueAsNew<typeof forecastJob>({ ...args, resume: { plan, nextChunk: end, done: progress.done, chunksDone: progress.chunksDone } });
    }
    if (plan.reconcileCutoffs) {
      // The chunks' share of this run's budget is spent; the cutoffs take the rest, and later runs what remains.
      const total = plan.reconcileCutoffs;
      const from = args.resume?.nextCutoff ?? 0;
      const to = Math.min(total, from + Math.max(0, Math.max(1, args.chunksPerRun) - (end - first)));
      let nextCutoff = from;
      const reconcileLane = async () => {
        while (nextCutoff < to) await reconcileCutoff(args.jobId, nextCutoff++);
      };
      await Promise.all(Array.from({ length: Math.min(args.parallelism, to - from) }, reconcileLane));
      if (to < total) {
        const resume = { plan, nextChunk: plan.chunks, done: progress.done, chunksDone: progress.chunksDone, nextCutoff: to };
        await continueAsNew<typeof forecastJob>({ ...args, resume });
      }
    }
    return await summarizeJob(args.jobId, plan.forecasts, plan.metricRows ?? plan.forecasts);
  } catch (err) {
    jobFailure(err);
  }
}
