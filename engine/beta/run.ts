import type { DuckDBInstance } from '@duckdb/node-api';
import { MODEL_NAMES, modelEntry, type ModelEntry } from '../../models/contract/model-registry.ts';
import type { ModelSettings } from '../../models/contract/model-interface.ts';
import type { Engine } from '../engine.ts';
import { invalidRequest, requestField, type FieldError } from '../errors.ts';
import { horizonOutOfRangeField, requireRunnableModel } from '../model-checks.ts';
import { quantileKey } from '../quantile-key.ts';
import type { Metrics } from '../response-schema.ts';
import { withConnection } from '../sql.ts';
import { backtestSettings, dataSpan, noForecastRefusal, planCutoffs, queryCutoffs, runBacktest, targetForecasts } from './backtest.ts';
import { addDuration, isoDuration, isoTimestamp } from './duration.ts';
import { asMemoryRefusal } from './beta-database.ts';
import { prepareSeries } from './prepare.ts';
import type { ResolvedBetaQuery } from './resolved-query.ts';
import { BetaResponseBuilder, type BetaResponse } from './response.ts';
import type { BetaSources } from './table-sources.ts';

/**
 * The synchronous beta pipeline: the schema logic prepares the series in DuckDB (prepare.ts), the
 * backtest core plans and runs one task per (series, cutoff, target) (backtest.ts), and the answer
 * is assembled column by column.
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

export async function runBetaForecast(
  engine: Engine,
  db: DuckDBInstance,
  query: ResolvedBetaQuery,
  modelName: string,
  sources: BetaSources,
): Promise<{ body: BetaResponse; timings: BetaTimings; series: number }> {
  const model = checkBetaQueryAgainstModel(query, modelName, engine.settings.models);
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
  const outputs = await runBacktest(engine, model, settings, planned, prepared, 'interactive');
  const t3 = performance.now();

  const keptIdentifiers = prepared.identifiers.filter((name) => prepared.levels.some((l) => l.kept.includes(name)));
  const builder = new BetaResponseBuilder(keptIdentifiers, prepared.targets, settings.levels.map(quantileKey));
  const { freq, horizon } = settings;
  const spanText = isoDuration(freq);
  let metrics: Record<string, Metrics> = {};
  for (const { planned: p, target, output, actuals, metrics: scored } of targetForecasts(planned, outputs, settings)) {
    const ids = Object.fromEntries(prepared.identifiers.map((name, j) => [name, p.series.ids[j]]));
    const cutoffText = isoTimestamp(p.cutoff);
    if (target === 0) {
      const refitted = settings.reportRefitted ? p.fittedAt === p.seen : undefined;
      for (let h = 1; h <= horizon; h++)
        builder.addRow(ids, isoTimestamp(addDuration(p.cutoff, freq, h)), cutoffText, isoDuration(freq, h), spanText, refitted);
      metrics = {};
    }
    const name = prepared.targets[target];
    for (let h = 0; h < horizon; h++)
      builder.addPrediction(
        name,
        output.mean[h],
        output.quantiles.map((q) => q[h]),
        h < actuals.length ? actuals[h] : null,
      );
    if (scored) metrics[name] = scored;
    if (target === prepared.targets.length - 1 && actuals.length > 0) builder.addMetrics(ids, cutoffText, actuals.length, metrics);
  }
  const t4 = performance.now();
  return { body: builder.body, timings: { schemaMs: t1 - t0, modelMs: t3 - t2, assembleMs: t2 - t1 + (t4 - t3) }, series: prepared.series.length };
}
