import { backtestSettings, type BacktestSettings } from '../engine/beta/backtest.ts';
import { stepsBetween } from '../engine/beta/duration.ts';
import { hierarchyLevels, selectLevels } from '../engine/beta/hierarchy.ts';
import { reconcileStoredCutoff, seriesKey, type StoredBase, type StoredSeries } from '../engine/beta/reconciled-backtest.ts';
import type { ResolvedBetaQuery } from '../engine/beta/resolved-query.ts';
import type { Engine } from '../engine/engine.ts';
import { requireRunnableModel } from '../engine/model-checks.ts';
import type { ModelEntry } from '../models/contract/model-registry.ts';
import type { BetaResultNames } from '../store/beta-results.ts';
import type { JobStore } from '../store/job-store.ts';
import type { BetaPlan, JobMeta } from '../store/layout.ts';

/**
 * A reconciling beta job's per-cutoff step (docs/decisions/064-reconciliation-in-beta-jobs.md):
 * the cutoff's base forecasts read back from every chunk's part with one DuckDB query, the
 * series' history too when the method reads it, reconciled and scored by the engine, and
 * written as the results part numbered by the cutoff's position. Memory holds one cutoff.
 */

/** What a job's results are named by: its query's identifiers and targets, its model and levels. */
export function betaResultNames(meta: JobMeta, model: ModelEntry, plan: BetaPlan, settings: BacktestSettings, reconciled = false): BetaResultNames {
  return {
    jobId: meta.job_id,
    model: model.name,
    identifiers: plan.identifiers,
    targets: plan.targets,
    levels: settings.levels,
    freq: settings.freq,
    horizon: settings.horizon,
    ...(meta.schedule && { schedule: meta.schedule }),
    ...(reconciled && { reconciled }),
  };
}

export async function reconcileBetaCutoff(
  deps: { engine: Engine; store: JobStore },
  meta: JobMeta,
  query: ResolvedBetaQuery,
  plan: BetaPlan,
  cutoffIndex: number,
  signal: AbortSignal,
): Promise<number> {
  const r = query.reconciliation;
  const cutoff = plan.reconciliation?.cutoffs[cutoffIndex];
  if (!r || cutoff === undefined) throw new Error(`job ${meta.job_id} has no cutoff ${cutoffIndex} to reconcile`);
  const model = requireRunnableModel(meta.model, deps.engine.settings.models);
  const settings = backtestSettings(query, model);
  const shape = { identifiers: plan.identifiers.length, quantiles: r.taskLevels.length, horizon: settings.horizon };
  const stored = await deps.store.beta.baseForecasts(meta.job_id, shape, cutoff, r.residualWindow !== null);
  const series = r.readsHistory ? await seriesUpTo(deps.store, meta.job_id, plan, query, cutoff, stored) : null;
  const selected = selectLevels(hierarchyLevels(query.roles.identifiers, query.parsed.input.hierarchies), query.parsed.selector).levels;
  const context = {
    identifiers: plan.identifiers,
    targets: plan.targets,
    levels: settings.levels,
    expectedLevels: selected.map((level) => level.kept),
    cutoff,
    freq: query.freq,
    context: query.context,
  };
  const records = reconcileStoredCutoff(r, context, stored, series);
  signal.throwIfAborted();
  await deps.store.beta.writeResults(betaResultNames(meta, model, plan, settings, true), cutoffIndex, records);
  return records.length / plan.targets.length;
}

/** The values up to the cutoff of the series forecast there, read chunk by chunk so that no chunk's other values stay. */
async function seriesUpTo(
  store: JobStore,
  jobId: string,
  plan: BetaPlan,
  query: ResolvedBetaQuery,
  cutoff: number,
  stored: readonly StoredBase[],
): Promise<Map<string, StoredSeries>> {
  const wanted = new Set(stored.map((s) => seriesKey(s.ids)));
  const out = new Map<string, StoredSeries>();
  for (let chunk = 0; chunk < plan.chunks; chunk++) {
    const series = await store.beta.chunk(jobId, chunk, { freq: query.freq, targets: plan.targets.length, covariates: plan.covariates });
    for (const s of series) {
      const key = seriesKey(s.ids);
      if (!wanted.has(key)) continue;
      const seen = Math.min(s.length, stepsBetween(s.start, cutoff, query.freq) + 1);
      out.set(key, { start: s.start, targets: s.targets.map((values) => values.slice(0, seen)) });
    }
  }
  return out;
}
