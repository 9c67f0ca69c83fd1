import type { BetaJobFiles } from './beta-job-files.ts';
import { BETA_RESULT_COLUMNS, betaOrder } from './beta-results.ts';
import { jobKind, type JobKind, type JobMeta, type ResultTable } from './layout.ts';
import { FORECAST_RESULT_COLUMNS, forecastOrder } from './results.ts';

/**
 * What the store does differently for each kind of job (docs/decisions/047-beta-jobs.md); the
 * rest of a job's home (metadata, parts, merging, counting, removal) is the same for both.
 */
export interface StoredJobKind {
  /** The order of a merged download and of a metrics page: by series, creation date or cutoff, (target,) step. */
  resultOrder(jobId: string, table: ResultTable, beta: BetaJobFiles): Promise<string>;
  /** Whether accuracy is pooled per target: a beta job's rows name their target column, a forecast job's have none. */
  readonly accuracyByTarget: boolean;
  /** The results' own column names, besides the quantiles' `q_*` (and a beta job's identifiers). */
  readonly resultColumns: readonly string[];
}

/** Forecast jobs (POST /forecast-jobs): series by position in the request. */
export const forecastKind: StoredJobKind = {
  resultOrder: async (_jobId, table) => forecastOrder(table),
  accuracyByTarget: false,
  resultColumns: FORECAST_RESULT_COLUMNS,
};

/** Beta jobs (POST /v1-beta/forecast-jobs): series by their identifier columns, which the job's plan names. */
export const betaKind: StoredJobKind = {
  resultOrder: async (jobId, table, beta) => betaOrder((await beta.plan(jobId)).identifiers, table),
  accuracyByTarget: true,
  resultColumns: BETA_RESULT_COLUMNS,
};

export const STORED_JOB_KINDS: Record<JobKind, StoredJobKind> = { forecast: forecastKind, beta: betaKind };

/** The kind of a stored job, by its metadata. */
export const storedKindOf = (meta: JobMeta): StoredJobKind => STORED_JOB_KINDS[jobKind(meta)];
