/**
 * A job's objects in the store, by key. Inputs and results stay out of Temporal's history:
 * workflows carry only the job id and counts.
 *
 *   jobs/<job_id>/job.json            who owns the job, its model, when it was submitted
 *   jobs/<job_id>/request.json        the validated request
 *   jobs/<job_id>/chunks/<n>.json     one activity's share of the series
 *   results/job_id=<job_id>/predictions/part-<n>.parquet
 *   results/job_id=<job_id>/metrics/part-<n>.parquet
 *   results/job_id=<job_id>/export/<table>.parquet   the parts merged, for download
 *
 * Results are partitioned hive-style (`job_id=<id>`), so one DuckDB query with
 * `hive_partitioning = true` over every job's predictions parts reads them all, the job id a
 * column (README, "Results for analysts").
 */
export const JOBS = 'jobs';
export const jobKey = (jobId: string) => `${JOBS}/${jobId}`;
export const metaKey = (jobId: string) => `${jobKey(jobId)}/job.json`;
export const requestKey = (jobId: string) => `${jobKey(jobId)}/request.json`;
export const chunkKey = (jobId: string, chunk: number) => `${jobKey(jobId)}/chunks/${chunk}.json`;

export type ResultTable = 'predictions' | 'metrics';
export const resultsKey = (jobId: string) => `results/job_id=${jobId}`;
export const partsKey = (jobId: string, table: ResultTable) => `${resultsKey(jobId)}/${table}`;
export const partKey = (jobId: string, table: ResultTable, chunk: number) => `${partsKey(jobId, table)}/part-${String(chunk).padStart(5, '0')}.parquet`;
export const exportKey = (jobId: string, table: ResultTable) => `${resultsKey(jobId)}/export/${table}.parquet`;

/** Job ids are ours (UUIDs); anything else in a URL is refused before it touches the store. */
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
