/**
 * A job's objects in the store, by key (each key below says what it holds). Inputs and results stay
 * out of Temporal's history: workflows carry only the job id and counts. Results are partitioned
 * hive-style (`job_id=<id>`), so one DuckDB query reads every job's parts:
 * docs/decisions/024-result-parquet.md.
 */
export const JOBS = 'jobs';
export const jobKey = (jobId: string) => `${JOBS}/${jobId}`;
/** `jobs/<job_id>/job.json`: who owns the job, its model, when it was submitted. */
export const metaKey = (jobId: string) => `${jobKey(jobId)}/job.json`;
/** `jobs/<job_id>/outcome.json`: how the job ended, kept for when Temporal has purged its workflow's history. */
export const outcomeKey = (jobId: string) => `${jobKey(jobId)}/outcome.json`;

/** A job's end as its poller reads it. */
export type JobOutcome = { status: 'completed' } | { status: 'failed'; error: { code: string; message: string } };

/** `jobs/<job_id>/request.json`: the validated request. */
export const requestKey = (jobId: string) => `${jobKey(jobId)}/request.json`;
/** `jobs/<job_id>/chunks/<n>.json`: one activity's share of the series. */
export const chunkKey = (jobId: string, chunk: number) => `${jobKey(jobId)}/chunks/${chunk}.json`;

/** `jobs/<job_id>/query.json`: a beta job's query; `sources.json`: where its data is. */
export const betaQueryKey = (jobId: string) => `${jobKey(jobId)}/query.json`;
export const betaSourcesKey = (jobId: string) => `${jobKey(jobId)}/sources.json`;
/** `jobs/<job_id>/inputs/part-<i>`: a beta job's uploaded parts, as sent. */
export const betaInputKey = (jobId: string, part: number) => `${jobKey(jobId)}/inputs/part-${part}`;
/** `jobs/<job_id>/plan.json`: a beta job's cutoffs and names, once its series are prepared. */
export const betaPlanKey = (jobId: string) => `${jobKey(jobId)}/plan.json`;
/** `jobs/<job_id>/chunks/<n>.parquet`: a beta chunk's prepared series values. */
export const betaChunkValuesKey = (jobId: string, chunk: number) => `${jobKey(jobId)}/chunks/${chunk}.parquet`;
/** `jobs/<job_id>/base/{forecasts,residuals}/part-<n>.parquet`: a reconciling beta chunk's base forecasts and residuals, read back cutoff by cutoff. */
export type BaseTable = 'forecasts' | 'residuals';
export const betaBasePartsKey = (jobId: string, table: BaseTable) => `${jobKey(jobId)}/base/${table}`;
export const betaBaseKey = (jobId: string, table: BaseTable, chunk: number) =>
  `${betaBasePartsKey(jobId, table)}/part-${String(chunk).padStart(5, '0')}.parquet`;

export type ResultTable = 'predictions' | 'metrics';
export const resultsKey = (jobId: string) => `results/job_id=${jobId}`;
export const partsKey = (jobId: string, table: ResultTable) => `${resultsKey(jobId)}/${table}`;
/** `results/job_id=<job_id>/{predictions,metrics}/part-<n>.parquet`: one chunk's results. */
export const partKey = (jobId: string, table: ResultTable, chunk: number) => `${partsKey(jobId, table)}/part-${String(chunk).padStart(5, '0')}.parquet`;
/** `results/job_id=<job_id>/export/<table>.parquet`: the parts merged, for download. */
export const exportKey = (jobId: string, table: ResultTable) => `${resultsKey(jobId)}/export/${table}.parquet`;

/** Job ids are ours (UUIDs); anything else in a URL is refused before it touches the store. */
export const isJobId = (id: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);

/** The metadata written before a job's workflow starts. */
export interface JobMeta {
  job_id: string;
  /** `forecast` (POST /forecast-jobs, JSON) or `beta` (POST /v1-beta/forecast-jobs, files); absent means `forecast`. */
  kind?: JobKind;
  principal: string;
  model: string;
  created_at: string;
  /** Known at submission for a forecast job; null for a beta job (its series are known once prepared). */
  series: number | null;
  forecasts: number | null;
  quantiles: number[];
  /** A forecast job's refit policy, when not `every` (its results then say which dates were refitted). */
  refit?: 'once' | number;
  /** Set on a scheduled run: its schedule and the time it was scheduled for (its results carry both). */
  schedule?: ScheduledRunOf;
}

/** The schedule a run belongs to, and the time Temporal scheduled it for (ISO 8601 UTC). */
export interface ScheduledRunOf {
  schedule_id: string;
  scheduled_at: string;
}

export type JobKind = 'forecast' | 'beta';
export const jobKind = (meta: JobMeta): JobKind => meta.kind ?? 'forecast';

/** Where a beta job's sources are: an uploaded part (stored at `betaInputKey(job, part)`), or a locator read where it is. */
export type StoredSource = { part: number; name: string; format: 'parquet' | 'arrow' } | { locator: string };

export interface StoredBetaSources {
  input: StoredSource;
  covariates: StoredSource[];
}

/** What planning a beta job found: the names its results use, its cutoffs (null: each series' end), and its chunk count. */
export interface BetaPlan {
  identifiers: string[];
  targets: string[];
  covariates: number;
  cutoffs: number[] | null;
  chunks: number;
  /** Set when the job reconciles: the cutoffs with forecasts (epoch ms, ascending), one reconciling activity each. */
  reconciliation?: { cutoffs: number[] };
}
