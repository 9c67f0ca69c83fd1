import type { DuckDBInstance } from '@duckdb/node-api';
import { MODEL_NAMES, modelEntry, type ModelEntry } from '../../models/contract/model-registry.ts';
import type { ModelSettings } from '../../models/contract/model-interface.ts';
import type { Engine } from '../engine.ts';
import { invalidRequest, requestField, type FieldError } from '../errors.ts';
import { horizonOutOfRangeField, requireRunnableModel } from '../model-checks.ts';
import { withConnection } from '../sql.ts';
import { backtestSettings, dataSpan, noForecastRefusal, planCutoffs, queryCutoffs, runBacktest, targetForecasts } from './backtest.ts';
import { asMemoryRefusal } from './beta-database.ts';
import { prepareSeries } from './prepare.ts';
import { reconcileBacktest } from './reconciled-backtest.ts';
import type { ResolvedBetaQuery } from './resolved-query.ts';
import { betaResponse, type BetaResponse } from './response.ts';
import type { BetaSources } from './table-sources.ts';

/**
 * The synchronous beta pipeline: the schema logic prepares the series in DuckDB (prepare.ts), the
 * backtest core plans and runs one task per (series, cutoff, target) (backtest.ts), a query that
 * asks for it is reconciled cutoff by cutoff (reconciled-backtest.ts), and the answer is
 * assembled column by column.
 */

export interface BetaTimings {
  /** Reading the sources and the schema logic in DuckDB, up to the series in memory. */
  schemaMs: number;
  /** Fitting and forecasting (worker threads). */
  modelMs: number;
  /** Cutoffs, tasks, metrics and the response's columns. */
  assembleMs: number;
}

/**
 * The model must be runnable here, and must use what the query gives it: covariates a model
 * cannot use are refused (as in the stable API), never silently dropped. Cheap, so the route
 * checks it before it reads any upload.
 */
export function checkBetaQueryAgainstModel(query: ResolvedBetaQuery, modelName: string, settings: ModelSettings): ModelEntry {
  const { parsed } = query;
  const model = requireRunnableModel(modelName, settings);
  const horizon = horizonOutOfRangeField(model, settings, query.horizon, ['prediction_length']);
  if (horizon) throw invalidRequest('the query does not fit the chosen model', [horizon]);
  if (parsed.model_config && parsed.model_config.model !== model.name) {
    const field = requestField(['model_config', 'model'], `is '${parsed.model_config.model}' but the query's model is '${model.name}'`);
    throw invalidRequest('the query does not fit the chosen model', [field]);
  }
  if (model.capabilities.covariates.includes('historical')) return model;
  const users = MODEL_NAMES.filter((n) => modelEntry(n)?.capabilities.covariates.includes('historical')).join(', ');
  const message = `model '${model.name}' does not use historical covariates; models that do: ${users}`;
  const errors: FieldError[] = [
    ...query.roles.historical.map((name) => requestField([...query.rolesPath, name], message)),
    ...(parsed.covariates ?? []).map((_, i) => requestField(['covariates', i], message)),
  ];
  if (errors.length > 0) throw invalidRequest('the query does not fit the chosen model', errors);
  return model;
}

/** Runs a query whose model `checkBetaQueryAgainstModel` accepted. */
export async function runBetaForecast(
  engine: Engine,
  db: DuckDBInstance,
  query: ResolvedBetaQuery,
  model: ModelEntry,
  sources: BetaSources,
): Promise<{ body: BetaResponse; timings: BetaTimings; series: number }> {
  const t0 = performance.now();
  const prepared = await withConnection(db, (c) => prepareSeries(c, query, sources)).catch((error: unknown) => {
    throw asMemoryRefusal(error) ?? error;
  });
  const t1 = performance.now();

  const settings = backtestSettings(query, model);
  const span = dataSpan(prepared.series, prepared.freq);
  const planned = planCutoffs(prepared.series, queryCutoffs(query, span), prepared.freq, settings.refit);
  if (planned.length === 0) throw noForecastRefusal(span);
  const t2 = performance.now();
  const reconciliation = query.reconciliation;
  // Reconciliation reads a spread from a symmetric pair of quantiles: the model may forecast more levels than the answer holds.
  const taskSettings = reconciliation ? { ...settings, levels: reconciliation.taskLevels } : settings;
  const base = await runBacktest(engine, model, taskSettings, planned, prepared, 'interactive');
  const reconciled = reconciliation ? await reconcileBacktest(engine, model, reconciliation, settings, prepared, planned, base, 'interactive') : null;
  const t3 = performance.now();

  const forecasts = targetForecasts(planned, reconciled?.outputs ?? base, settings, reconciled?.extras);
  const body = betaResponse(prepared, settings, forecasts, reconciled !== null);
  const t4 = performance.now();
  return { body, timings: { schemaMs: t1 - t0, modelMs: t3 - t2, assembleMs: t2 - t1 + (t4 - t3) }, series: prepared.series.length };
}
