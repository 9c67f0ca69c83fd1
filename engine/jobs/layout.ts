import path from 'node:path';

/**
 * Where a job's files live under DATA_DIR. Inputs and results stay out of Temporal's history:
 * workflows carry only the job id and counts.
 *
 *   jobs/<job_id>/job.json            who owns the job, its model, when it was submitted
 *   jobs/<job_id>/request.json        the validated request
 *   jobs/<job_id>/chunks/<n>.json     one activity's share of the series
 *   results/<job_id>/predictions/part-<n>.parquet
 *   results/<job_id>/metrics/part-<n>.parquet
 */
export const jobDir = (dataDir: string, jobId: string) => path.join(dataDir, 'jobs', jobId);
export const jobMetaFile = (dataDir: string, jobId: string) => path.join(jobDir(dataDir, jobId), 'job.json');
export const jobRequestFile = (dataDir: string, jobId: string) => path.join(jobDir(dataDir, jobId), 'request.json');
export const chunkFile = (dataDir: string, jobId: string, chunk: number) => path.join(jobDir(dataDir, jobId), 'chunks', `${chunk}.json`);
export const resultsDir = (dataDir: string, jobId: string) => path.join(dataDir, 'results', jobId);
export const partName = (chunk: number) => `part-${String(chunk).padStart(5, '0')}.parquet`;
export const predictionsDir = (dataDir: string, jobId: string) => path.join(resultsDir(dataDir, jobId), 'predictions');
export const metricsDir = (dataDir: string, jobId: string) => path.join(resultsDir(dataDir, jobId), 'metrics');

/** Job ids are ours (UUIDs); anything else in a URL is refused before it touches the disk. */
export const isJobId = (id: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);

/** The metadata written before a job's workflow starts. */
export interface JobMeta {
  job_id: string;
  principal: string;
  model: string;
  created_at: string;
  series: number;
  forecasts: number;
  quantiles: number[];
}

/** Column of a quantile level in the results: 0.1 -> q_0_1 (no dots, so SQL needs no quoting). */
export const quantileColumn = (key: string): string => `q_${key.replace('.', '_')}`;
