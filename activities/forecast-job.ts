import fs from 'node:fs';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ForecastFailedError, RequestError } from '../engine/errors.ts';
import { modelEntry } from '../models/registry.ts';
import { computePredictions } from '../engine/forecast.ts';
import { splitIntoChunks, type Chunk } from '../engine/jobs/chunking.ts';
import { chunkFile, jobMetaFile, jobRequestFile, metricsDir, partName, predictionsDir, type JobMeta } from '../engine/jobs/layout.ts';
import { requestedQuantiles, seriesAreCoupled } from '../engine/plan.ts';
import type { ForecastRequest } from '../engine/request-schema.ts';
import { countResultRows, writeChunkParts } from './parquet-parts.ts';

export interface ActivityConfig {
  dataDir: string;
  /** Target (series x forecast creation date) pairs per activity. */
  forecastsPerChunk: number;
}

export interface JobPlan {
  chunks: number;
  forecasts: number;
  chunkForecasts: number[];
}

export interface JobSummary {
  forecasts: number;
  predictionRows: number;
  metricRows: number;
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

function writeJsonAtomic(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, JSON.stringify(value));
  fs.renameSync(tmp, file);
}

/**
 * Errors the caller caused, or a model's failure, end the job: retrying cannot help. The failure
 * type is the error code the job reports.
 */
function asJobFailure(err: unknown): unknown {
  if (err instanceof RequestError) return ApplicationFailure.nonRetryable(err.message, err.code, err.errors);
  if (err instanceof ForecastFailedError) return ApplicationFailure.nonRetryable(err.message, 'forecast_failed');
  return err;
}

/** Activities are plain async functions over the job's files; the workflow passes ids and counts. */
export function createActivities(config: ActivityConfig) {
  return {
    /** Splits the stored request into chunk files; safe to repeat (same request, same chunks). */
    async planJob(jobId: string): Promise<JobPlan> {
      const request = readJson<ForecastRequest>(jobRequestFile(config.dataDir, jobId));
      const { model } = readJson<JobMeta>(jobMetaFile(config.dataDir, jobId));
      const entry = modelEntry(model);
      const chunks = splitIntoChunks(request, config.forecastsPerChunk, entry !== undefined && seriesAreCoupled(request, entry));
      chunks.forEach((chunk, n) => writeJsonAtomic(chunkFile(config.dataDir, jobId, n), chunk));
      const chunkForecasts = chunks.map((c) => c.fcdPositions.reduce((s, f) => s + f.length, 0));
      return { chunks: chunks.length, forecasts: chunkForecasts.reduce((a, b) => a + b, 0), chunkForecasts };
    },

    /** Forecasts one chunk and writes its Parquet parts; a retry overwrites the same parts. */
    async runChunk(jobId: string, chunkNumber: number): Promise<number> {
      const context = Context.current();
      // Beat well inside the heartbeat timeout, so only a dead worker misses it.
      const interval = Math.max(100, Math.min(5_000, (context.info.heartbeatTimeoutMs ?? 30_000) / 3));
      const heartbeat = setInterval(() => context.heartbeat(), interval);
      try {
        const meta = readJson<JobMeta>(jobMetaFile(config.dataDir, jobId));
        const chunk = readJson<Chunk>(chunkFile(config.dataDir, jobId, chunkNumber));
        const rows = await computePredictions(chunk.request, meta.model, 'background').catch((err) => {
          throw asJobFailure(err);
        });
        const levels = requestedQuantiles(chunk.request);
        await writeChunkParts(
          {
            predictions: path.join(predictionsDir(config.dataDir, jobId), partName(chunkNumber)),
            metrics: path.join(metricsDir(config.dataDir, jobId), partName(chunkNumber)),
          },
          {
            jobId,
            model: meta.model,
            seriesIndex: (p) => chunk.seriesIndex[p.planned.seriesIndex],
            fcdIndex: (p) => chunk.fcdPositions[p.planned.seriesIndex][p.planned.fcdPosition],
            serie: (p) => chunk.request.series[p.planned.seriesIndex],
          },
          levels,
          rows,
          context.info.attempt,
        );
        return rows.length;
      } finally {
        clearInterval(heartbeat);
      }
    },

    /** Counts what the job wrote: one metrics row per forecast, or the job is not complete. */
    async summarizeJob(jobId: string, expectedForecasts: number): Promise<JobSummary> {
      if (expectedForecasts === 0) return { forecasts: 0, predictionRows: 0, metricRows: 0 };
      const counts = await countResultRows(
        path.join(predictionsDir(config.dataDir, jobId), '*.parquet'),
        path.join(metricsDir(config.dataDir, jobId), '*.parquet'),
      );
      if (counts.metricRows !== expectedForecasts) {
        throw ApplicationFailure.nonRetryable(`job wrote ${counts.metricRows} forecasts; expected ${expectedForecasts}`, 'internal_error');
      }
      return { forecasts: expectedForecasts, ...counts };
    },
  };
}

export type JobActivities = ReturnType<typeof createActivities>;
