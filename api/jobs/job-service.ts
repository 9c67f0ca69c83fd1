import { randomUUID } from 'node:crypto';
import { ApplicationFailure, WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Engine } from '../../engine/engine.ts';
import { countForecasts } from '../../engine/jobs/chunking.ts';
import { validateForecast } from '../../engine/model-checks.ts';
import type { ForecastRequest } from '../../engine/request-schema.ts';
import { quantileLevels } from '../../engine/tasks.ts';
import { StoreLockBusyError } from '../../store/store-lock.ts';
import type { JobStore } from '../../store/job-store.ts';
import { jobKind, type JobKind, type JobMeta, type JobOutcome, type StoredBetaSources } from '../../store/layout.ts';
import type { JobProgress } from '../../workflows/forecast-job.ts';
import type { Quotas } from '../../config.ts';
import { HttpError } from '../problem.ts';
import { API_JOB_KINDS } from './job-kinds.ts';
import { TEMPORAL_ANSWER_MS } from './scheduler-errors.ts';
import { concurrentJobsExceeded, requireForecastsWithin, requireSeriesWithin, tooManySubmissionsAtOnce } from '../quotas.ts';

export type JobState = { status: 'in_progress'; progress: JobProgress | null } | JobOutcome;

const LOST: JobState = { status: 'failed', error: { code: 'lost', message: 'the job is not known to the workflow service any more' } };

/** What a submission is admitted with: its id, when chosen beforehand, and the principal's quotas. */
export interface Admission {
  /** The job's id, chosen by an Idempotency-Key's record before the job exists. */
  jobId?: string;
  /** The submitting principal's quotas (api/quotas.ts); without them, none apply. */
  quotas?: Quotas;
}

/**
 * A job not yet found in Temporal is counted as in progress this long after its entry was written
 * (its submission is storing its input); older, its submission died before starting it.
 */
const STARTING_GRACE_MS = 10 * 60_000;

export interface JobsConfig {
  taskQueue: string;
  parallelism: number;
  heartbeatTimeoutMs: number;
  chunksPerRun: number;
  /** How long one Temporal call may take before the API answers 503; default TEMPORAL_ANSWER_MS. */
  temporalAnswerMs?: number;
}

/** Forecast jobs: state lives in Temporal (one workflow per job), data in the job store. */
export class JobService {
  constructor(
    readonly client: Client,
    readonly store: JobStore,
    private readonly engine: Engine,
    readonly config: JobsConfig,
  ) {}

  /** A Temporal call that must answer in time (`temporalAnswerMs`): otherwise DEADLINE_EXCEEDED, which the API answers 503. */
  temporal<T>(call: () => Promise<T>): Promise<T> {
    return this.client.withDeadline(Date.now() + (this.config.temporalAnswerMs ?? TEMPORAL_ANSWER_MS), call);
  }

  /**
   * Validates the request against the model (without planning it: the workflow's activities
   * plan) and the principal's quotas, stores the input, then starts the job's workflow.
   */
  async submit(request: ForecastRequest, model: string, principal: string, admission: Admission = {}): Promise<JobMeta> {
    validateForecast(this.engine.settings, request, model);
    const forecasts = countForecasts(request);
    if (admission.quotas) {
      requireSeriesWithin(admission.quotas, request.series.length);
      requireForecastsWithin(admission.quotas, forecasts);
    }
    const meta: JobMeta = {
      job_id: admission.jobId ?? randomUUID(),
      kind: 'forecast',
      principal,
      model,
      created_at: new Date().toISOString(),
      series: request.series.length,
      forecasts,
      quantiles: [...quantileLevels(request.quantiles)],
      ...(request.refit !== 'every' && { refit: request.refit }),
    };
    return this.start(meta, () => this.store.create(meta, request), admission.quotas?.concurrentJobs ?? 0);
  }

  /**
   * A beta job: its query was validated and its parts checked by the caller (the cheap checks of
   * the synchronous endpoint); the parts are streamed from their local files into the store.
   */
  async submitBeta(
    input: {
      query: unknown;
      model: string;
      principal: string;
      quantiles: readonly number[];
      sources: StoredBetaSources;
      files: readonly string[];
    },
    admission: Admission = {},
  ) {
    const meta: JobMeta = {
      job_id: admission.jobId ?? randomUUID(),
      kind: 'beta',
      principal: input.principal,
      model: input.model,
      created_at: new Date().toISOString(),
      series: null,
      forecasts: null,
      quantiles: [...input.quantiles],
    };
    return this.start(meta, () => this.store.beta.create(meta, input.query, input.sources, input.files), admission.quotas?.concurrentJobs ?? 0);
  }

  /**
   * Takes a place among the principal's jobs in progress (none to take when `concurrentJobs` is 0),
   * stores the job, then starts its workflow; if any step fails, nothing of the job is left.
   */
  private async start(meta: JobMeta, store: () => Promise<void>, concurrentJobs: number): Promise<JobMeta> {
    const jobId = meta.job_id;
    if (concurrentJobs > 0) await this.takePlace(meta.principal, jobId, concurrentJobs);
    try {
      await store();
      await this.temporal(() =>
        this.client.workflow.start('forecastJob', {
          taskQueue: this.config.taskQueue,
          workflowId: jobId,
          args: [{ jobId, parallelism: this.config.parallelism, heartbeatTimeoutMs: this.config.heartbeatTimeoutMs, chunksPerRun: this.config.chunksPerRun }],
        }),
      );
    } catch (err) {
      // No workflow, no job: leave nothing behind that polling would find.
      await this.store.remove(jobId).catch(() => undefined);
      if (concurrentJobs > 0) await this.store.activeJobs.remove(meta.principal, jobId).catch(() => undefined);
      throw err;
    }
    return meta;
  }

  /**
   * The concurrent-jobs quota: under the principal's lock in the store, its jobs in progress are
   * counted and the new job's entry added, so racing submissions never take more places than the
   * quota, whichever API process they reach. Entries of ended jobs are pruned when at the limit.
   */
  private async takePlace(principal: string, jobId: string, limit: number): Promise<void> {
    const active = this.store.activeJobs;
    try {
      await active.locked(principal, async () => {
        let ids = await active.list(principal);
        if (ids.length >= limit) ids = await this.inProgressOf(principal, ids);
        if (ids.length >= limit) throw concurrentJobsExceeded(limit);
        await active.add(principal, jobId);
      });
    } catch (err) {
      if (err instanceof StoreLockBusyError) throw tooManySubmissionsAtOnce();
      throw err;
    }
  }

  /** The jobs among `jobIds` that may be in progress; the others' entries are removed. */
  private async inProgressOf(principal: string, jobIds: string[]): Promise<string[]> {
    const inProgress = await Promise.all(
      jobIds.map(async (jobId) => {
        try {
          const { status } = await this.temporal(() => this.client.workflow.getHandle(jobId).describe());
          if (status.name === 'RUNNING' || status.name === 'CONTINUED_AS_NEW') return true;
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          const added = await this.store.activeJobs.addedAt(principal, jobId);
          if (added !== null && Date.now() - added < STARTING_GRACE_MS) return true;
        }
        await this.store.activeJobs.remove(principal, jobId);
        return false;
      }),
    );
    return jobIds.filter((_, i) => inProgress[i]);
  }

  /**
   * The job's metadata, if it exists, belongs to the principal (404 and 403 otherwise) and is of
   * the kind the route serves (a beta job's status is read under /v1-beta, and the other way round).
   */
  async meta(jobId: string, principal: string, kind: JobKind): Promise<JobMeta> {
    const meta = await this.store.meta(jobId);
    if (!meta) throw new HttpError(404, 'not_found', `no job '${jobId}'`);
    if (meta.principal !== principal) throw new HttpError(403, 'forbidden', `job '${jobId}' belongs to another principal`);
    const actual = jobKind(meta);
    if (actual !== kind) throw new HttpError(404, 'not_found', `job '${jobId}' is a ${actual} job: read it at ${API_JOB_KINDS[actual].prefix}/${jobId}`);
    return meta;
  }

  /**
   * The job's state as its workflow says, or, once Temporal's retention has purged the workflow,
   * as the job store recorded its end. A job neither knows is `lost`.
   */
  async state(jobId: string): Promise<JobState> {
    const handle = this.client.workflow.getHandle(jobId);
    let description;
    try {
      description = await this.temporal(() => handle.describe());
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return (await this.store.outcome(jobId)) ?? LOST;
      throw err;
    }
    const state = await this.workflowState(jobId, description.status.name);
    // Recorded the first time it is seen ended (a completed job records it itself).
    if (state.status !== 'in_progress' && !(await this.store.outcome(jobId))) await this.store.recordOutcome(jobId, state);
    return state;
  }

  private async workflowState(jobId: string, status: string): Promise<JobState> {
    switch (status) {
      case 'RUNNING':
      case 'CONTINUED_AS_NEW':
        return { status: 'in_progress', progress: await this.progress(jobId) };
      case 'COMPLETED':
        return { status: 'completed' };
      case 'CANCELLED':
        return { status: 'failed', error: { code: 'cancelled', message: 'the job was cancelled' } };
      case 'TERMINATED':
        // An operator did it, or a schedule's overlap policy `terminate_other`, ending the run that made the job.
        return {
          status: 'failed',
          error: { code: 'terminated', message: 'the job was terminated: by an operator, or by its schedule (overlap terminate_other)' },
        };
      case 'TIMED_OUT':
        return { status: 'failed', error: { code: 'timed_out', message: 'the job ran past its time limit' } };
      default:
        return { status: 'failed', error: await this.failure(jobId) };
    }
  }

  /** done/total from the workflow; null when no worker answers quickly (all busy or down). */
  private async progress(jobId: string): Promise<JobProgress | null> {
    try {
      return await this.client.withDeadline(Date.now() + 2_000, () => this.client.workflow.getHandle(jobId).query<JobProgress>('progress'));
    } catch {
      return null;
    }
  }

  private async failure(jobId: string): Promise<{ code: string; message: string }> {
    try {
      await this.temporal(() => this.client.workflow.getHandle(jobId).result());
    } catch (err) {
      if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure) {
        return { code: err.cause.type ?? 'internal_error', message: err.cause.message };
      }
      if (err instanceof WorkflowFailedError) return { code: 'internal_error', message: err.cause?.message ?? err.message };
    }
    return { code: 'internal_error', message: 'the job failed' };
  }

  /**
   * Which dependencies jobs need do not answer within `timeoutMs`, checked together: `temporal`,
   * `storage`, with why (for the log: the reasons may name addresses). None: jobs can be served.
   */
  async unready(timeoutMs: number): Promise<{ dependency: 'temporal' | 'storage'; reason: string }[]> {
    const check = async (dependency: 'temporal' | 'storage', work: () => Promise<unknown>) => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([work(), late]);
        return null;
      } catch (error) {
        return { dependency, reason: (error as Error).message.split('\n')[0] };
      } finally {
        clearTimeout(timer);
      }
    };
    const results = await Promise.all([
      check('temporal', () => this.temporal(() => this.client.workflowService.getSystemInfo({}))),
      check('storage', () => this.store.check()),
    ]);
    return results.filter((r) => r !== null);
  }

  /**
   * Jobs by the state of their workflow's current run (`running`, `completed`, `failed`,
   * `canceled`, `terminated`, `timed_out`), every principal's, from Temporal's visibility store.
   */
  async countByStatus(): Promise<Record<string, number>> {
    const { groups } = await this.temporal(() =>
      this.client.workflowService.countWorkflowExecutions({
        namespace: this.client.options.namespace,
        // A job that continues as new has one such run per earlier run: only its current run counts.
        // Only jobs: a scheduled run's own workflow, and its webhook delivery, share the task queue.
        query: `WorkflowType = 'forecastJob' AND TaskQueue = '${this.config.taskQueue}' AND ExecutionStatus != 'ContinuedAsNew' GROUP BY ExecutionStatus`,
      }),
    );
    const counts: Record<string, number> = {};
    for (const group of groups ?? []) {
      const status = defaultPayloadConverter.fromPayload<string>(group.groupValues![0]);
      // The count is a protobuf Long.
      counts[status.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()] = Number(String(group.count ?? 0));
    }
    return counts;
  }

  /**
   * Deletes a job: a running one is cancelled and its workflow awaited (so that no chunk writes
   * results after the removal; at most `waitMs`), then its inputs and results are removed.
   */
  async remove(jobId: string, waitMs = 30_000): Promise<void> {
    if ((await this.state(jobId)).status === 'in_progress') {
      const handle = this.client.workflow.getHandle(jobId);
      await this.temporal(() => handle.cancel()).catch(() => undefined);
      await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, waitMs).unref())]);
    }
    await this.store.remove(jobId);
  }

  /** Deletes every finished job created before `before` (epoch ms), every principal's; returns their ids. */
  async removeFinishedBefore(before: number): Promise<string[]> {
    const removed: string[] = [];
    for (const meta of await this.store.list()) {
      if (!(Date.parse(meta.created_at) < before)) continue;
      const state = await this.state(meta.job_id);
      if (state.status === 'in_progress') continue;
      // Unknown to this Temporal, with no end recorded: it may be running on another cluster (this
      // process pointed at the wrong one), so it is kept. DELETE removes it.
      if (state === LOST) continue;
      await this.store.remove(meta.job_id);
      removed.push(meta.job_id);
    }
    return removed;
  }

  async cancel(jobId: string): Promise<void> {
    await this.temporal(() => this.client.workflow.getHandle(jobId).cancel());
  }

  /** The principal's jobs, newest first. */
  async list(principal: string, limit: number): Promise<JobMeta[]> {
    return (await this.store.list())
      .filter((m) => m.principal === principal)
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .slice(0, limit);
  }
}
