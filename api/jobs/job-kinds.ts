import type { JobKind } from '../../store/layout.ts';
import { BetaMetricsPageQuery, MetricsPageQuery } from '../dashboard/schemas.ts';

/** Where beta jobs are served (POST /v1-beta/forecast-jobs and below). */
export const BETA_JOBS = '/v1-beta/forecast-jobs';

/** What the API serves differently for each kind of job (docs/decisions/047-beta-jobs.md). */
export interface ApiJobKind {
  /** The prefix the kind's jobs are read under; a job read under the other kind's is a 404 naming this one. */
  readonly prefix: string;
  /** The query of a page of its metrics: a beta job's series are named by their identifier columns, so it has no series_index. */
  readonly metricsPageQuery: typeof MetricsPageQuery | typeof BetaMetricsPageQuery;
  /** Whether its leaderboard compares it with the caller's other jobs on the same data (forecast jobs, by their request). */
  readonly comparesSameData: boolean;
}

export const API_JOB_KINDS: Record<JobKind, ApiJobKind> = {
  forecast: { prefix: '/forecast-jobs', metricsPageQuery: MetricsPageQuery, comparesSameData: true },
  beta: { prefix: BETA_JOBS, metricsPageQuery: BetaMetricsPageQuery, comparesSameData: false },
};
