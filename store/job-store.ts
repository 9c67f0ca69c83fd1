import type { Readable } from 'node:stream';
import type { Chunk } from '../engine/jobs/chunking.ts';
import type { ForecastRequest } from '../engine/request-schema.ts';
import type { Prediction } from '../engine/response-schema.ts';
import { chunkKey, exportKey, isJobId, jobKey, JOBS, metaKey, partKey, partsKey, requestKey, resultsKey, type JobMeta, type ResultTable } from './layout.ts';
import { LocalFolder, type ObjectStore } from './object-store.ts';
import { countRows, mergeParts, readPredictions, writeResultParts, type ForecastResult } from './results.ts';

/**
 * A job's home: its metadata, its validated request, the chunk inputs the workflow plans, and its
 * results as Parquet parts, merged on demand for download. The API and the activities use this
 * and nothing else to read or write a job; where the objects live is the ObjectStore's concern
 * (a local folder, DATA_DIR, today).
 */
export class JobStore {
  constructor(private readonly objects: ObjectStore) {}

  /** The store in a local folder (DATA_DIR). */
  static local(dataDir: string): JobStore {
    return new JobStore(new LocalFolder(dataDir));
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

  /** Every job's metadata (a job whose metadata cannot be read is left out). */
  async list(): Promise<JobMeta[]> {
    const ids = (await this.objects.children(JOBS)).filter(isJobId);
    const metas = await Promise.all(ids.map((id) => this.objects.readJson<JobMeta>(metaKey(id)).catch(() => null)));
    return metas.filter((m): m is JobMeta => m !== null);
  }

  async request(jobId: string): Promise<ForecastRequest> {
    return this.required(await this.objects.readJson<ForecastRequest>(requestKey(jobId)), `the request of job ${jobId}`);
  }

  async writeChunk(jobId: string, chunk: number, value: Chunk): Promise<void> {
    await this.objects.writeJson(chunkKey(jobId, chunk), value);
  }

  async chunk(jobId: string, chunk: number): Promise<Chunk> {
    return this.required(await this.objects.readJson<Chunk>(chunkKey(jobId, chunk)), `chunk ${chunk} of job ${jobId}`);
  }

  /**
   * Writes one chunk's results. Each part replaces the chunk's earlier part whole, so a retried
   * chunk rewrites its rows instead of adding to them.
   */
  async writeResults(meta: JobMeta, chunk: number, results: readonly ForecastResult[]): Promise<void> {
    const job = { jobId: meta.job_id, model: meta.model, quantiles: meta.quantiles };
    await this.objects.writeWith(partKey(meta.job_id, 'predictions', chunk), (predictions) =>
      this.objects.writeWith(partKey(meta.job_id, 'metrics', chunk), (metrics) => writeResultParts({ predictions, metrics }, job, results)),
    );
  }

  /** Rows the job's parts hold. */
  async countResults(jobId: string): Promise<{ predictionRows: number; metricRows: number }> {
    return { predictionRows: await countRows(this.partsGlob(jobId, 'predictions')), metricRows: await countRows(this.partsGlob(jobId, 'metrics')) };
  }

  /** Predictions of series [from, to), `series[i][j]` as the synchronous response has them. */
  async predictions(meta: JobMeta, from: number, to: number): Promise<Prediction[][]> {
    if (!(await this.objects.exists(partsKey(meta.job_id, 'predictions')))) return Array.from({ length: to - from }, () => []);
    const globs = { predictions: this.partsGlob(meta.job_id, 'predictions'), metrics: this.partsGlob(meta.job_id, 'metrics') };
    return readPredictions(globs, meta.quantiles, from, to);
  }

  /** A table of the job's results as one Parquet file (merged once, then reused); null when it has none. */
  async export(jobId: string, table: ResultTable): Promise<Readable | null> {
    if (!(await this.objects.exists(partsKey(jobId, table)))) return null;
    const key = exportKey(jobId, table);
    if (!(await this.objects.exists(key))) await this.objects.writeWith(key, (location) => mergeParts(this.partsGlob(jobId, table), table, location));
    return this.objects.openRead(key);
  }

  private partsGlob(jobId: string, table: ResultTable): string {
    return `${this.objects.location(partsKey(jobId, table))}/*.parquet`;
  }

  private required<T>(value: T | null, what: string): T {
    if (value === null) throw new Error(`${what} is missing from the job store`);
    return value;
  }
}
