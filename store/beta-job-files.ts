import type { Duration } from '../engine/beta/duration.ts';
import type { ForecastRecord } from '../engine/beta/forecast-record.ts';
import type { PreparedSeries, SeriesHead } from '../engine/beta/prepare.ts';
import { readBaseForecasts, writeBaseForecastParts, type BaseForecast, type BaseShape, type StoredBaseForecast } from './beta-base-forecasts.ts';
import { readBetaChunkSeries, writeBetaResultParts, type BetaResultNames } from './beta-results.ts';
import { required } from './errors.ts';
import {
  betaBaseKey,
  betaBasePartsKey,
  betaChunkValuesKey,
  betaInputKey,
  betaPlanKey,
  betaQueryKey,
  betaSourcesKey,
  chunkKey,
  metaKey,
  type BetaPlan,
  type JobMeta,
  type StoredBetaSources,
} from './layout.ts';
import type { ObjectStore } from './object-store.ts';
import { writeChunkParts } from './results.ts';
import type { StoreDatabase } from './store-database.ts';

/**
 * What only a beta job has in the store (`JobStore.beta`): its uploaded parts, its query as sent
 * and its sources, the plan its planning wrote, its chunk inputs (series heads as JSON, values as
 * Parquet), a reconciling job's base forecasts, and its results' parts, written with columns named
 * by its query.
 */
export class BetaJobFiles {
  constructor(
    private readonly objects: ObjectStore,
    private readonly db: StoreDatabase,
  ) {}

  /**
   * Stores a new beta job: its uploaded parts (streamed from the local files the upload went
   * to), its query and sources, then its metadata: a job whose metadata exists is whole.
   */
  async create(meta: JobMeta, query: unknown, sources: StoredBetaSources, files: readonly string[]): Promise<void> {
    await Promise.all(files.map((file, part) => this.objects.putFile(betaInputKey(meta.job_id, part), file)));
    await this.objects.writeJson(betaQueryKey(meta.job_id), query);
    await this.objects.writeJson(betaSourcesKey(meta.job_id), sources);
    await this.objects.writeJson(metaKey(meta.job_id), meta);
  }

  /** The query as it was sent: the reader parses (and resolves) it. */
  async query(jobId: string): Promise<unknown> {
    return required(await this.objects.readJson<unknown>(betaQueryKey(jobId)), `the query of job ${jobId}`);
  }

  async sources(jobId: string): Promise<StoredBetaSources> {
    return required(await this.objects.readJson<StoredBetaSources>(betaSourcesKey(jobId)), `the sources of job ${jobId}`);
  }

  /** Streams an uploaded part of the job into a local file. */
  downloadInput(jobId: string, part: number, file: string): Promise<void> {
    return this.objects.getFile(betaInputKey(jobId, part), file);
  }

  async writePlan(jobId: string, plan: BetaPlan): Promise<void> {
    await this.objects.writeJson(betaPlanKey(jobId), plan);
  }

  async plan(jobId: string): Promise<BetaPlan> {
    return required(await this.objects.readJson<BetaPlan>(betaPlanKey(jobId)), `the plan of job ${jobId}`);
  }

  /** A chunk's input: its series' heads, and their values from a local Parquet file. */
  async writeChunk(jobId: string, chunk: number, heads: SeriesHead[], valuesFile: string): Promise<void> {
    await this.objects.putFile(betaChunkValuesKey(jobId, chunk), valuesFile);
    await this.objects.writeJson(chunkKey(jobId, chunk), heads);
  }

  async chunk(jobId: string, chunk: number, shape: { freq: Duration; targets: number; covariates: number }): Promise<PreparedSeries[]> {
    const heads = required(await this.objects.readJson<SeriesHead[]>(chunkKey(jobId, chunk)), `chunk ${chunk} of job ${jobId}`);
    return readBetaChunkSeries(this.db, this.objects.location(betaChunkValuesKey(jobId, chunk)), heads, shape);
  }

  /**
   * Writes one part of results: a chunk's, or a reconciling job's cutoff's (numbered by the
   * cutoff's position). As for forecast jobs, a retry replaces the part whole.
   */
  async writeResults(names: BetaResultNames, part: number, forecasts: Iterable<ForecastRecord>): Promise<void> {
    await writeChunkParts(this.objects, names.jobId, part, (files) => writeBetaResultParts(this.db, files, names, forecasts));
  }

  /** A reconciling job's chunk: its base forecasts and residuals, in place of results; a retry replaces its parts whole. */
  async writeBaseForecasts(jobId: string, chunk: number, shape: BaseShape, forecasts: Iterable<BaseForecast>): Promise<void> {
    await this.objects.writeWith(betaBaseKey(jobId, 'forecasts', chunk), (forecastsFile) =>
      this.objects.writeWith(betaBaseKey(jobId, 'residuals', chunk), (residualsFile) =>
        writeBaseForecastParts(this.db, { forecasts: forecastsFile, residuals: residualsFile }, shape, forecasts),
      ),
    );
  }

  /** Every chunk's base forecasts at one cutoff, with their residuals when asked for. */
  baseForecasts(jobId: string, shape: BaseShape, cutoff: number, withResiduals: boolean): Promise<StoredBaseForecast[]> {
    const glob = (table: 'forecasts' | 'residuals') => `${this.objects.location(betaBasePartsKey(jobId, table))}/*.parquet`;
    return readBaseForecasts(this.db, { forecasts: glob('forecasts'), residuals: glob('residuals') }, shape, cutoff, withResiduals);
  }
}
