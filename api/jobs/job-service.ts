import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure, WorkflowFailedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { RequestError } from '../../engine/errors.ts';
import { prepareForecast } from '../../engine/forecast.ts';
import { countForecasts } from '../../engine/jobs/chunking.ts';
import { isJobId, jobDir, jobMetaFile, jobRequestFile, type JobMeta } from '../../engine/jobs/layout.ts';
import { requestedQuantiles } from '../../engine/plan.ts';
import type { ForecastRequest } from '../../engine/request-schema.ts';
import type { JobProgress } from '../../workflows/forecast-job.ts';

export type JobState =
  { status: 'in_progress'; progress: JobProgress | null } | { status: 'completed' } | { status: 'failed'; error: { code: string; message: string } };

export interface JobsConfig {
  dataDir: string;
  taskQueue: string;
  parallelism: number;
  heartbeatTimeoutMs: number;
}

function writeJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(value));
  fs.renameSync(tmp, file);
}

/** Forecast jobs: state lives in Temporal (one workflow per job), data in files under DATA_DIR. */
export class JobService {
  constructor(
    private readonly client: Client,
    private readonly config: JobsConfig,
  ) {}

  /** Validates against the model, stores the input, then starts the job's workflow. */
  async submit(request: ForecastRequest, model: string, principal: string): Promise<JobMeta> {
    prepareForecast(request, model);
    const jobId = randomUUID();
    const meta: JobMeta = {
      job_id: jobId,
      principal,
      model,
      created_at: new Date().toISOString(),
      series: request.series.length,
      forecasts: countForecasts(request),
      quantiles: requestedQuantiles(request),
    };
    writeJson(jobRequestFile(this.config.dataDir, jobId), request);
    writeJson(jobMetaFile(this.config.dataDir, jobId), meta);
    try {
      await this.client.workflow.start('forecastJob', {
        taskQueue: this.config.taskQueue,
        workflowId: jobId,
        args: [{ jobId, parallelism: this.config.parallelism, heartbeatTimeoutMs: this.config.heartbeatTimeoutMs }],
      });
    } catch (err) {
      // No workflow, no job: leave nothing behind that polling would find.
      fs.rmSync(jobDir(this.config.dataDir, jobId), { recursive: true, force: true });
      throw err;
    }
    return meta;
  }

  /** The job's metadata, if it exists and belongs to the principal (404 and 403 otherwise). */
  meta(jobId: string, principal: string): JobMeta {
    const file = jobMetaFile(this.config.dataDir, jobId);
    if (!isJobId(jobId) || !fs.existsSync(file)) throw new RequestError(404, 'not_found', `no job '${jobId}'`);
    const meta = JSON.parse(fs.readFileSync(file, 'utf8')) as JobMeta;
    if (meta.principal !== principal) throw new RequestError(403, 'forbidden', `job '${jobId}' belongs to another principal`);
    return meta;
  }

  async state(jobId: string): Promise<JobState> {
    const handle = this.client.workflow.getHandle(jobId);
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        return { status: 'failed', error: { code: 'lost', message: 'the job is not known to the workflow service any more' } };
      throw err;
    }
    switch (description.status.name) {
      case 'RUNNING':
      case 'CONTINUED_AS_NEW':
        return { status: 'in_progress', progress: await this.progress(jobId) };
      case 'COMPLETED':
        return { status: 'completed' };
      case 'CANCELLED':
        return { status: 'failed', error: { code: 'cancelled', message: 'the job was cancelled' } };
      case 'TERMINATED':
        return { status: 'failed', error: { code: 'terminated', message: 'the job was terminated by an operator' } };
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
      await this.client.workflow.getHandle(jobId).result();
    } catch (err) {
      if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure) {
        return { code: err.cause.type ?? 'internal_error', message: err.cause.message };
      }
      if (err instanceof WorkflowFailedError) return { code: 'internal_error', message: err.cause?.message ?? err.message };
    }
    return { code: 'internal_error', message: 'the job failed' };
  }

  async cancel(jobId: string): Promise<void> {
    await this.client.workflow.getHandle(jobId).cancel();
  }

  /** The principal's jobs, newest first. */
  list(principal: string, limit: number): JobMeta[] {
    const root = path.join(this.config.dataDir, 'jobs');
    if (!fs.existsSync(root)) return [];
    return fs
      .readdirSync(root)
      .filter(isJobId)
      .map((id) => {
        try {
          return JSON.parse(fs.readFileSync(jobMetaFile(this.config.dataDir, id), 'utf8')) as JobMeta;
        } catch {
          return null;
        }
      })
      .filter((m): m is JobMeta => m !== null && m.principal === principal)
      .sort((a, b) => b.created_at.localeCompare(a.created_at))
      .slice(0, limit);
  }
}
