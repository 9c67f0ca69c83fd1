import type { JobMeta } from '../store/layout.ts';

/** What planning a job found: its chunks and the forecasts each holds. */
export interface JobPlan {
  chunks: number;
  forecasts: number;
  chunkForecasts: number[];
  /** Metrics rows the job writes when that is not one per forecast (a beta job: one per forecast and target). */
  metricRows?: number;
  /**
   * Set only for a beta job that reconciles: the cutoffs to reconcile, one activity each, after
   * every chunk. Absent from every other plan, so their workflows schedule what they always did.
   */
  reconcileCutoffs?: number;
}

/**
 * The two steps that differ by kind of job (docs/decisions/047-beta-jobs.md): both kinds share the
 * workflow, and its activities hand each step to the job's kind.
 */
export interface KindActivities {
  /** Splits the stored input into chunks and writes each chunk's input; safe to repeat. */
  planJob(meta: JobMeta): Promise<JobPlan>;
  /** Forecasts one chunk and writes its results, unless `signal` aborts first; returns the forecasts made. */
  runChunk(meta: JobMeta, chunkNumber: number, signal: AbortSignal): Promise<number>;
  /** A reconciling job's cutoff (by position): its chunks' base forecasts reconciled, written as a results part; returns the forecasts written. */
  reconcileCutoff?(meta: JobMeta, cutoffIndex: number, signal: AbortSignal): Promise<number>;
}
