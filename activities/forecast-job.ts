import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Engine } from '../engine/engine.ts';
import { EngineError } from '../engine/errors.ts';
import { computePredictions } from '../engine/forecast.ts';
import { splitIntoChunks } from '../engine/jobs/chunking.ts';
import { seriesAreCoupled } from '../engine/plan.ts';
import { modelEntry } from '../models/contract/model-registry.ts';
import type { JobStore } from '../store/job-store.ts';
import { jobKind, type JobKind, type JobMeta } from '../store/layout.ts';
import { jobChunkDuration } from '../telemetry/prometheus-metrics.ts';
import { createBetaActivities, type BetaDependencies } from './beta-job.ts';
import { JobDocuments } from './job-documents.ts';
import type { JobPlan, KindActivities } from './job-kinds.ts';

export type { JobPlan } from './job-kinds.ts';

export interface ActivityDependencies {
  engine: Engine;
  store: JobStore;
  /** Target (series x forecast creation date) pairs per activity. */
  forecastsPerChunk: number;
  /** What beta jobs need beside: their DuckDB database, locator rules and a local work folder. */
  beta: Pick<BetaDependencies, 'db' | 'locator' | 'workDir'>;
}

export interface JobSummary {
  forecasts: number;
  predictionRows: number;
  metricRows: number;
}

/**
 * Errors the caller caused, or a model's failure, end the job: retrying cannot help. The failure
 * type is the error kind, which the job reports as its code.
 */
function asJobFailure(err: unknown): unknown {
  if (err instanceof EngineError) return ApplicationFailure.nonRetryable(err.message, err.kind, err.fields);
  return err;
}

async function jobMeta(store: JobStore, jobId: string): Promise<JobMeta> {
  const meta = await store.meta(jobId);
  if (!meta) throw new Error(`job ${jobId} has no metadata in the job store`);
  return meta;
}

/** How long a cancelled attempt waits for its work to settle (a write under way) before it ends. */
const SETTLE_MS = 10_000;
const noop = () => undefined;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Beats well inside the heartbeat timeout while `work` runs, so only a dead worker misses it.
 * A cancellation (the job cancelled or deleted, or this worker stopping past SHUTDOWN_GRACE) ends
 * the attempt at once, so Temporal retries the chunk elsewhere without waiting for the heartbeat
 * timeout, and aborts `work`'s signal: its model batches are dropped or their threads stopped
 * (engine.cancellable), and it writes nothing after that (a write already under way is awaited).
 */
async function heartbeating<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  const interval = Math.max(100, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 30_000) / 3));
  const heartbeat = setInterval(() => context.heartbeat(), interval);
  const running = work(context.cancellationSignal);
  // Once the race is lost to a cancellation, nobody awaits the work: its failure must not crash the process.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, context.cancelled]);
  } catch (err) {
    // Its model batches are aborted, so the work settles at once, unless it is mid-write: let that
    // finish before the attempt ends, so nothing lands after a deleted job's files are removed.
    if (context.cancellationSignal.aborted) await Promise.race([running.then(noop, noop), sleep(SETTLE_MS)]);
    throw asJobFailure(err);
  } finally {
    clearInterval(heartbeat);
  }
}

/** A forecast job's steps: its request split into chunks of series and creation dates, each forecast by the engine. */
function forecastActivities({ engine, store, forecastsPerChunk }: Pick<ActivityDependencies, 'engine' | 'store' | 'forecastsPerChunk'>): KindActivities {
  return {
    /** Same input, same chunks. */
    async planJob(meta: JobMeta): Promise<JobPlan> {
      const jobId = meta.job_id;
      const request = await store.request(jobId);
      const entry = modelEntry(meta.model);
      const coupled = entry !== undefined && seriesAreCoupled(request, entry);
      const chunks = splitIntoChunks(request, forecastsPerChunk, coupled);
      await Promise.all(chunks.map((chunk, n) => store.writeChunk(jobId, n, chunk)));
      const chunkForecasts = chunks.map((c) => c.fcdPositions.reduce((s, f) => s + f.length, 0));
      return { chunks: chunks.length, forecasts: chunkForecasts.reduce((a, b) => a + b, 0), chunkForecasts };
    },

    async runChunk(meta: JobMeta, chunkNumber: number, signal: AbortSignal): Promise<number> {
      const chunk = await store.chunk(meta.job_id, chunkNumber);
      const rows = await computePredictions(engine.cancellable(signal), chunk.request, meta.model, 'background', undefined, chunk.refitFcds);
      const results = rows.map(({ planned, prediction }) => ({
        seriesIndex: chunk.seriesIndex[planned.seriesIndex],
        fcdIndex: chunk.fcdPositions[planned.seriesIndex][planned.fcdPosition],
        fcd: planned.fcd,
        serie: chunk.request.series[planned.seriesIndex],
        prediction,
      }));
      signal.throwIfAborted();
      await store.writeResults(meta, chunkNumber, results);
      return rows.length;
    },
  };
}

/**
 * Activities: thin wrappers that read a job's objects from the store, call the engine and write
 * the results back. Forecast jobs and beta jobs share the workflow; each step is the job's kind's.
 */
export function createActivities({ engine, store, forecastsPerChunk, beta }: ActivityDependencies) {
  const documents = new JobDocuments();
  const kinds: Record<JobKind, KindActivities> = {
    forecast: forecastActivities({ engine, store, forecastsPerChunk }),
    beta: createBetaActivities({ engine, store, ...beta, minimumForecastsPerChunk: forecastsPerChunk, documents }),
  };

  return {
    /** Splits the stored input into chunks; safe to repeat (same input, same chunks). */
    async planJob(jobId: string): Promise<JobPlan> {
      // The workflow gives planning a heartbeat timeout (a beta job's schema logic may run long), so both kinds beat.
      return heartbeating(async () => {
        const meta = await jobMeta(store, jobId);
        return kinds[jobKind(meta)].planJob(meta);
      });
    },

    /** Forecasts one chunk and writes its results; a retry overwrites the same parts. */
    async runChunk(jobId: string, chunkNumber: number): Promise<number> {
      return heartbeating(async (signal) => {
        const meta = await documents.get(`meta/${jobId}`, () => jobMeta(store, jobId));
        const kind = jobKind(meta);
        const timer = jobChunkDuration.startTimer({ kind });
        try {
          return await kinds[kind].runChunk(meta, chunkNumber, signal);
        } finally {
          timer();
        }
      });
    },
    /** A reconciling beta job's cutoff (by position): its chunks' base forecasts reconciled and written as one results part; safe to repeat. */
    async reconcileCutoff(jobId: string, cutoffIndex: number): Promise<number> {
      return heartbeating(async (signal) => {
        const meta = await documents.get(`meta/${jobId}`, () => jobMeta(store, jobId));
        const step = kinds[jobKind(meta)].reconcileCutoff;
        if (!step) throw ApplicationFailure.nonRetryable(`job ${jobId} is a ${jobKind(meta)} job: it reconciles nothing`, 'internal_error');
        return step(meta, cutoffIndex, signal);
      });
    },
    /** Counts what the job wrote: every metrics row it planned (one per forecast, and target for a beta job), or the job is not complete. */
    async summarizeJob(jobId: string, expectedForecasts: number, expectedMetricRows = expectedForecasts): Promise<JobSummary> {
      if (expectedForecasts === 0) {
        // Every series only context: the results are empty tables, so their downloads still answer with the columns.
        const meta = await jobMeta(store, jobId);
        if (jobKind(meta) === 'forecast') await store.writeResults(meta, 0, []);
        await store.recordOutcome(jobId, { status: 'completed' });
        return { forecasts: 0, predictionRows: 0, metricRows: 0 };
      }
      const counts = await store.countResults(jobId);
      if (counts.metricRows !== expectedMetricRows) {
        throw ApplicationFailure.nonRetryable(`job wrote ${counts.metricRows} metrics rows; expected ${expectedMetricRows}`, 'internal_error');
      }
      // The job reads completed from the store too, once Temporal's retention has purged its workflow.
      await store.recordOutcome(jobId, { status: 'completed' });
      return { forecasts: expectedForecasts, ...counts };
    },
  };
}

export type JobActivities = ReturnType<typeof createActivities>;
