/** The shapes of the API answers the dashboard reads (see /openapi for the full documents). */

export type JobKind = 'forecast' | 'beta';
export type JobStatusName = 'in_progress' | 'completed' | 'failed';

export interface Progress {
  done: number;
  total: number | null;
  chunksDone: number;
  chunks: number | null;
}

export interface JobError {
  code: string;
  message: string;
}

/** An entry of GET /forecast-jobs. */
export interface JobSummary {
  job_id: string;
  kind: JobKind;
  model: string;
  created_at: string;
  series: number | null;
  forecasts: number | null;
  status: JobStatusName;
  progress?: Progress | null;
  error?: JobError;
}

/** GET /forecast-jobs/{id} (asked for one series) or /v1-beta/forecast-jobs/{id}. */
export interface JobStatus {
  job_id: string;
  status: JobStatusName;
  progress?: Progress | null;
  error?: JobError;
  total_series?: number;
  model?: string;
  created_at?: string;
}

export type MetricName = 'mae' | 'mape' | 'crps' | 'wape' | 'scaled_bias';
export const METRIC_NAMES: MetricName[] = ['mae', 'mape', 'crps', 'wape', 'scaled_bias'];
export type Metrics = Record<MetricName, number | null>;

export interface LeaderboardEntry extends Metrics {
  rank: number;
  job_id: string;
  model: string;
  target: string | null;
  scored_steps: number;
}

export interface Leaderboard {
  job_id: string;
  jobs: string[];
  entries: LeaderboardEntry[];
}

export type Cell = string | number | boolean | null;

export interface MetricsPage {
  job_id: string;
  total: number;
  offset: number;
  limit: number;
  columns: string[];
  rows: Record<string, Cell>[];
}

export interface SeriesForecast {
  fcd_index: number;
  fcd: number;
  created_at: string;
  index: string[];
  mean: number[];
  quantiles: Record<string, number[]>;
  actual: (number | null)[];
  metrics: Metrics | null;
}

export interface SeriesView {
  job_id: string;
  series_index: number;
  total_series: number;
  freq: string;
  horizon: number;
  quantiles: number[];
  only_as_context: boolean;
  history: { index: string[]; target: number[] };
  forecasts: SeriesForecast[];
}

/** One forecast of POST /forecast: `series[i][j]` for series i and creation date j. */
export interface Prediction {
  prediction: Record<string, number[]>;
  index: string[];
  metrics: Metrics | null;
}

export interface ForecastResponse {
  status: string;
  series: Prediction[][];
}

/** POST /v1-beta/forecast: one row per (series, cutoff, step), arrays aligned. */
export interface BetaResponse {
  data: {
    time: string[];
    cutoff: string[];
    identifiers: Record<string, (string | null)[]>;
    targets: Record<string, { quantiles: Record<string, number[]>; actual: (number | null)[] }>;
  };
}

/** When a schedule's runs are due: cron expressions or a fixed interval, in a time zone. */
export interface ScheduleSpec {
  cron?: string[];
  interval?: string;
  time_zone: string;
  start_at?: string;
  end_at?: string;
}

/** GET /v1-beta/forecast-schedules/{id}. */
export interface Schedule {
  schedule_id: string;
  model: string;
  query: unknown;
  spec: ScheduleSpec;
  overlap: string;
  catch_up_window: string;
  paused: boolean;
  webhook: { url: string } | null;
  alert: { metric: MetricName; above: number } | null;
  created_at: string;
  updated_at: string;
  next_runs: string[];
  overlap_skipped: number;
}

/** Accuracy pooled over every scored step of a run, for one model and target. */
export interface PooledMetrics extends Metrics {
  model: string;
  target: string | null;
  scored_steps: number;
}

/** An entry of GET /v1-beta/forecast-schedules/{id}/runs (newest first): an ordinary beta job. */
export interface ScheduledRun {
  job_id: string;
  scheduled_at: string;
  started_at: string;
  finished_at: string | null;
  status: JobStatusName;
  error: JobError | null;
  metrics: PooledMetrics[];
  alerted: boolean | null;
}
