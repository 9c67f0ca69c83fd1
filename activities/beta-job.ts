import fs from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { arrowSource } from '../engine/beta/arrow-source.ts';
import { backtestSettings, planCutoffs, queryCouplesSeries, runBacktest, targetForecasts } from '../engine/beta/backtest.ts';
import { forecastRecords } from '../engine/beta/forecast-record.ts';
import { planBetaChunks } from '../engine/beta/job-plan.ts';
import { locatorSource, type LocatorConfig } from '../engine/beta/locator.ts';
import { oneStepResiduals } from '../engine/beta/one-step-residuals.ts';
import { BetaQuery } from '../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../engine/beta/resolved-query.ts';
import { parquetSource, type BetaSources, type TableSource } from '../engine/beta/table-sources.ts';
import type { Engine } from '../engine/engine.ts';
import type { FieldPath } from '../engine/errors.ts';
import { withConnection } from '../engine/sql.ts';
import { requireRunnableModel } from '../engine/model-checks.ts';
import type { JobStore } from '../store/job-store.ts';
import type { JobMeta, StoredSource } from '../store/layout.ts';
import type { JobDocuments } from './job-documents.ts';
import { betaResultNames, reconcileBetaCutoff } from './beta-reconciliation.ts';
import type { JobPlan, KindActivities } from './job-kinds.ts';

/**
 * A beta job's steps: planning (the uploaded parts fetched from the store to a local folder,
 * the schema logic in DuckDB, one Parquet input per chunk written back to the store) and each
 * chunk (its series read back, forecast by the backtest core, results written as Parquet). A
 * reconciling job's chunks write base forecasts instead, and each cutoff's activity reconciles
 * them into results (beta-reconciliation.ts).
 */

export interface BetaDependencies {
  engine: Engine;
  store: JobStore;
  /** The DuckDB database the schema logic runs in (spilling to its own folder). */
  db: DuckDBInstance;
  locator: LocatorConfig;
  /** A local folder for a planning's downloads and chunk files, removed after each. */
  workDir: string;
  minimumForecastsPerChunk: number;
  /** The worker's cache of documents that never change once written. */
  documents: JobDocuments;
}

/** Rebuilds the job's sources from where they were stored: parts from local copies, locators as they were given. */
async function storedSources(deps: BetaDependencies, jobId: string, dir: string): Promise<BetaSources> {
  const stored = await deps.store.beta.sources(jobId);
  const open = async (source: StoredSource, at: FieldPath): Promise<TableSource> => {
    if ('locator' in source) return locatorSource(source.locator, deps.locator, { root: 'request', path: at });
    const file = path.join(dir, `part-${source.part}`);
    await deps.store.beta.downloadInput(jobId, source.part, file);
    const label = `part '${source.name}'`;
    const where = { root: 'upload', path: [source.name] } as const;
    return source.format === 'parquet' ? parquetSource(label, where, [file]) : arrowSource(label, where, file);
  };
  return {
    input: await open(stored.input, ['input', 'source']),
    covariates: await Promise.all(stored.covariates.map((source, i) => open(source, ['covariates', i, 'schema', 'source']))),
  };
}

/** A beta job's steps; its query is read, parsed and resolved once per worker (`documents`). */
export function createBetaActivities(deps: BetaDependencies): KindActivities {
  const { engine, store } = deps;
  const documents = deps.documents;
  const queryOf = (jobId: string) => documents.get(`query/${jobId}`, async () => resolveBetaQuery(BetaQuery.parse(await store.beta.query(jobId))));

  return {
    async planJob(meta: JobMeta): Promise<JobPlan> {
      const jobId = meta.job_id;
      const query = await queryOf(jobId);
      // A model this worker cannot run fails the job before any work.
      const model = requireRunnableModel(meta.model, engine.settings.models);
      const coupled = queryCouplesSeries(query, model, backtestSettings(query, model));
      const dir = path.join(deps.workDir, `${jobId}-${process.pid}-${Date.now()}`);
      await fs.mkdir(dir, { recursive: true });
      try {
        const sources = await storedSources(deps, jobId, dir);
        const plan = await withConnection(deps.db, (c) =>
          planBetaChunks(c, query, sources, { minimumForecastsPerChunk: deps.minimumForecastsPerChunk, dir: path.join(dir, 'chunks'), coupled }),
        );
        for (const [n, chunk] of plan.chunks.entries()) await store.beta.writeChunk(jobId, n, chunk.heads, chunk.file);
        const { identifiers, targets, covariates, cutoffs } = plan;
        // Only a reconciling job's plan names its cutoffs: every other plan stays as it was, and so do its workflow's commands.
        const reconciliation = query.reconciliation ? { reconciliation: { cutoffs: plan.forecastCutoffs } } : {};
        await store.beta.writePlan(jobId, { identifiers, targets, covariates, cutoffs, chunks: plan.chunks.length, ...reconciliation });
        const chunkForecasts = plan.chunks.map((c) => c.forecasts);
        const forecasts = chunkForecasts.reduce((a, b) => a + b, 0);
        const reconciles = query.reconciliation ? { reconcileCutoffs: plan.forecastCutoffs.length } : {};
        return { chunks: plan.chunks.length, forecasts, chunkForecasts, metricRows: forecasts * targets.length, ...reconciles };
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },

    /** Forecasts one chunk and writes its results, unless `signal` aborts first (the job cancelled: nothing is written). */
    async runChunk(meta: JobMeta, chunkNumber: number, signal: AbortSignal): Promise<number> {
      const jobId = meta.job_id;
      const query = await queryOf(jobId);
      const model = requireRunnableModel(meta.model, engine.settings.models);
      const plan = await documents.get(`plan/${jobId}`, () => store.beta.plan(jobId));
      const { freq } = query;
      const settings = backtestSettings(query, model);
      const series = await store.beta.chunk(jobId, chunkNumber, { freq, targets: plan.targets.length, covariates: plan.covariates });
      const planned = planCutoffs(series, plan.cutoffs, freq, settings.refit);
      const r = query.reconciliation;
      if (r) {
        // Base forecasts, with the levels that give a spread and the residuals the estimator reads; reconciled per cutoff later.
        const taskSettings = { ...settings, levels: r.taskLevels };
        const base = await runBacktest(engine.cancellable(signal), model, taskSettings, planned, plan, 'background');
        const residuals =
          r.residualWindow === null ? null : await oneStepResiduals(engine.cancellable(signal), model, settings, planned, plan, r.residualWindow, 'background');
        const shape = { identifiers: plan.identifiers.length, quantiles: r.taskLevels.length, horizon: settings.horizon };
        const records = [...forecastRecords(targetForecasts(planned, base, taskSettings))].map((f, i) => ({ ...f, residuals: residuals?.[i] ?? null }));
        signal.throwIfAborted();
        await store.beta.writeBaseForecasts(jobId, chunkNumber, shape, records);
        return planned.length;
      }
      const outputs = await runBacktest(engine.cancellable(signal), model, settings, planned, plan, 'background');
      signal.throwIfAborted();
      await store.beta.writeResults(betaResultNames(meta, model, plan, settings), chunkNumber, forecastRecords(targetForecasts(planned, outputs, settings)));
      return planned.length;
    },

    async reconcileCutoff(meta: JobMeta, cutoffIndex: number, signal: AbortSignal): Promise<number> {
      const query = await queryOf(meta.job_id);
      const plan = await documents.get(`plan/${meta.job_id}`, () => store.beta.plan(meta.job_id));
      return reconcileBetaCutoff({ engine, store }, meta, query, plan, cutoffIndex, signal);
    },
  };
}
