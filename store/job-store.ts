import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { StorageConfig } from '../config.ts';
import type { Chunk } from '../engine/jobs/chunking.ts';
import type { ForecastRequest } from '../engine/request-schema.ts';
import type { Prediction } from '../engine/response-schema.ts';
import {
  chunkKey,
  exportKey,
  isJobId,
  jobKey,
  JOBS,
  metaKey,
  outcomeKey,
  partsKey,
  requestKey,
  resultsKey,
  type JobMeta,
  type JobOutcome,
  type ResultTable,
} from './layout.ts';
import { ActiveJobs } from './active-jobs.ts';
import { ApiKeys } from './api-keys.ts';
import { BetaJobFiles } from './beta-job-files.ts';
import { required } from './errors.ts';
import { ScheduleRecords } from './schedule-records.ts';
import { storedKindOf } from './job-kinds.ts';
import { StoreDatabase } from './store-database.ts';
import { IdempotencyRecords } from './idempotency-records.ts';
import { LocalFolder, type ObjectStore } from './object-store.ts';
import { parseS3Url, S3Bucket } from './s3-bucket.ts';
import { countRows, mergeParts, readPredictions, writeChunkParts, writeResultParts, type ForecastResult } from './results.ts';
import { accuracy, rowsPage, type AccuracyRow, type Cell } from './result-queries.ts';

/**
 * A job's home: its metadata, its validated request, the chunk inputs the workflow plans, and its
 * results as Parquet parts, merged on demand for download. The API and the activities use this
 * and nothing else to read or write a job; where the objects live is the ObjectStore's concern
 * (a local folder or an S3-compatible bucket, STORAGE_URL). What only a beta job has is in `beta`;
 * where the kinds' results differ (their order, their accuracy rows), the job's kind says
 * (store/job-kinds.ts).
 */
export class JobStore {
  private readonly db: StoreDatabase;
  /** Idempotency-Key records of job submissions, beside the jobs (store/idempotency-records.ts). */
  readonly idempotency: IdempotencyRecords;
  /** Each principal's jobs that may be in progress, for the concurrent-jobs quota (store/active-jobs.ts). */
  readonly activeJobs: ActiveJobs;
  /** API keys made with the key CLI, shared by every API process of the store (store/api-keys.ts). */
  readonly apiKeys: ApiKeys;
  /** A beta job's own objects: its uploaded parts, query, sources, plan, chunk inputs and results (store/beta-job-files.ts). */
  readonly beta: BetaJobFiles;
  /** Scheduled backtests and their runs (store/schedule-records.ts). */
  readonly schedules: ScheduleRecords;

  constructor(private readonly objects: ObjectStore) {
    this.db = new StoreDatabase(objects);
    this.idempotency = new IdempotencyRecords(objects);
    this.activeJobs = new ActiveJobs(objects);
    this.apiKeys = new ApiKeys(objects);
    this.beta = new BetaJobFiles(objects, this.db);
    this.schedules = new ScheduleRecords(objects);
  }

  /** The store STORAGE_URL names: a local folder (`file://`) or an S3-compatible bucket (`s3://`). */
  static open(storage: StorageConfig): JobStore {
    const url = new URL(storage.url);
    if (url.protocol === 's3:') {
      const { bucket, prefix } = parseS3Url(storage.url);
      return new JobStore(new S3Bucket(bucket, prefix, storage.s3));
    }
    return new JobStore(new LocalFolder(fileURLToPath(url)));
  }

  /** The store in a local folder. */
  static local(dataDir: string): JobStore {
    return new JobStore(new LocalFolder(dataDir));
  }

  get url(): string {
    return this.objects.url;
  }

  /**
   * Checks at start that the store can be used, objects and Parquet alike: a missing bucket, bad
   * credentials or a DuckDB without httpfs stop the process with a message that says which.
   */
  async check(): Promise<void> {
    await this.objects.check();
    try {
      await this.db.use(async () => undefined);
    } catch (error) {
      throw new Error(
        `the job store ${this.objects.url} cannot be read by DuckDB: ${(error as Error).message.split('\n')[0]} (install DuckDB's httpfs extension: npm run duckdb-httpfs)`,
      );
    }
  }

  close(): void {
    this.db.close();
    this.objects.close?.();
  }

  /** Stores a new job's request, then its metadata: a job whose metadata exists is whole. */
  async create(meta: JobMeta, request: ForecastRequest): Promise<void> {
    await this.objects.writeJson(requestKey(meta.job_id), request);
    await this.objects.writeJson(metaKey(meta.job_id), meta);
  }

  /** Removes a job's inputs and results. */
  async remove(jobId: string): Promise<void> {
    await this.objects.removeAll(jobKey(jobId));
    await this.objects.removeAll(resultsKey(jobId));
  }

  /** The job's metadata; null for an unknown (or malformed) id. */
  async meta(jobId: string): Promise<JobMeta | null> {
    return isJobId(jobId) ? this.objects.readJson<JobMeta>(metaKey(jobId)) : null;
  }

  /** How the job ended, once recorded; null while it runs, or where its end was never seen. */
  outcome(jobId: string): Promise<JobOutcome | null> {
    return this.objects.readJson<JobOutcome>(outcomeKey(jobId));
  }

  /** Records how the job ended; the same end may be written again (every replica that sees it). */
  async recordOutcome(jobId: string, outcome: JobOutcome): Promise<void> {
    await this.objects.writeJson(outcomeKey(jobId), outcome);
  }

  /** Every job's metadata (a job whose metadata cannot be read is left out). */
  async list(): Promise<JobMeta[]> {
    const ids = (await this.objects.children(JOBS)).filter(isJobId);
    const metas = await Promise.all(ids.map((id) => this.objects.readJson<JobMeta>(metaKey(id)).catch(() => null)));
    return metas.filter((m): m is JobMeta => m !== null);
  }

  async request(jobId: string): Promise<ForecastRequest> {
    return required(await this.objects.readJson<ForecastRequest>(requestKey(jobId)), `the request of job ${jobId}`);
  }

  async writeChunk(jobId: string, chunk: number, value: Chunk): Promise<void> {
    await this.objects.writeJson(chunkKey(jobId, chunk), value);
  }

  async chunk(jobId: string, chunk: number): Promise<Chunk> {
    return required(await this.objects.readJson<Chunk>(chunkKey(jobId, chunk)), `chunk ${chunk} of job ${jobId}`);
  }

  /**
   * Writes one chunk's results. Each part replaces the chunk's earlier part whole, so a retried
   * chunk rewrites its rows instead of adding to them.
   */
  async writeResults(meta: JobMeta, chunk: number, results: readonly ForecastResult[]): Promise<void> {
    const job = { jobId: meta.job_id, model: meta.model, quantiles: meta.quantiles };
    await writeChunkParts(this.objects, meta.job_id, chunk, (files) => writeResultParts(this.db, files, job, results));
  }

  /** Rows the job's parts hold. */
  async countResults(jobId: string): Promise<{ predictionRows: number; metricRows: number }> {
    return {
      predictionRows: await countRows(this.db, this.partsGlob(jobId, 'predictions')),
      metricRows: await countRows(this.db, this.partsGlob(jobId, 'metrics')),
    };
  }

  /** Predictions of series [from, to), `series[i][j]` as the synchronous response has them. */
  async predictions(meta: JobMeta, from: number, to: number): Promise<Prediction[][]> {
    if (!(await this.hasParts(meta.job_id, 'predictions'))) return Array.from({ length: to - from }, () => []);
    const globs = { predictions: this.partsGlob(meta.job_id, 'predictions'), metrics: this.partsGlob(meta.job_id, 'metrics') };
    return readPredictions(this.db, globs, meta.quantiles, from, to, meta.refit !== undefined);
  }

  /** A table of the job's results as one Parquet file (merged once, then reused); null when it has none. */
  async export(meta: JobMeta, table: ResultTable): Promise<Readable | null> {
    const jobId = meta.job_id;
    if (!(await this.hasParts(jobId, table))) return null;
    const key = exportKey(jobId, table);
    if (!(await this.objects.exists(key))) {
      const order = await storedKindOf(meta).resultOrder(jobId, table, this.beta);
      await this.objects.writeWith(key, (location) => mergeParts(this.db, this.partsGlob(jobId, table), order, location));
    }
    return this.objects.read(key);
  }

  /** Each model's accuracy pooled over the job's scored steps (per target for a beta job); none before any result exists. */
  async accuracy(meta: JobMeta): Promise<AccuracyRow[]> {
    if (!(await this.hasParts(meta.job_id, 'predictions'))) return [];
    return accuracy(this.db, this.partsGlob(meta.job_id, 'predictions'), meta.quantiles, storedKindOf(meta).accuracyByTarget);
  }

  /** A page of the job's metrics (one row per forecast), in its download's order; `seriesIndex` keeps one series of a forecast job. */
  async metricsPage(
    meta: JobMeta,
    page: { offset: number; limit: number; seriesIndex?: number },
  ): Promise<{ total: number; columns: string[]; rows: Record<string, Cell>[] }> {
    const jobId = meta.job_id;
    if (!(await this.hasParts(jobId, 'metrics'))) return { total: 0, columns: [], rows: [] };
    const order = await storedKindOf(meta).resultOrder(jobId, 'metrics', this.beta);
    const where = page.seriesIndex === undefined ? undefined : `series_index = ${Math.trunc(page.seriesIndex)}`;
    return rowsPage(this.db, this.partsGlob(jobId, 'metrics'), order, { offset: page.offset, limit: page.limit, where });
  }

  private async hasParts(jobId: string, table: ResultTable): Promise<boolean> {
    return (await this.objects.children(partsKey(jobId, table))).length > 0;
  }

  private partsGlob(jobId: string, table: ResultTable): string {
    return `${this.objects.location(partsKey(jobId, table))}/*.parquet`;
  }
}
