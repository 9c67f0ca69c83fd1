import type { DuckDBInstance } from '@duckdb/node-api';
import { MODEL_NAMES, modelEntry, type ModelEntry } from '../../models/registry.ts';
import type { ForecastTask, ModelSettings } from '../../models/types.ts';
import type { Engine } from '../engine.ts';
import { invalidRequest, refuseField, requestField, type FieldError } from '../errors.ts';
import { computeMetrics } from '../metrics.ts';
import { requireRunnableModel } from '../model-checks.ts';
import { quantileKey } from '../quantile-key.ts';
import type { Metrics } from '../response-schema.ts';
import { couplesSeries, quantileLevels, runTasks, seasonLength } from '../tasks.ts';
import { withConnection } from '../sql.ts';
import { resolveCutoffs } from './cutoffs.ts';
import { addDuration, duration, isoDuration, isoTimestamp, seasonLengthFor, stepsBetween, wholeSteps } from './duration.ts';
import { asMemoryRefusal } from './duckdb.ts';
import { prepareSeries, type PreparedData, type PreparedSeries } from './prepare.ts';
import { inputColumns, summariseRoles, type BetaQuery } from './query-fields.ts';
import { BetaResponseBuilder, type BetaResponse } from './response.ts';
import type { BetaSources } from './sources.ts';

/**
 * The beta pipeline: the schema logic prepares the series in DuckDB (prepare.ts), the cutoffs
 * plan one task per (series, cutoff, target), the forecast core runs them (tasks.ts), and the
 * answer is assembled column by column.
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
export function checkBetaQueryAgainstModel(query: BetaQuery, modelName: string, settings: ModelSettings): ModelEntry {
  const model = requireRunnableModel(modelName, settings);
  if (model.capabilities.covariates.includes('historical')) return model;
  const users = MODEL_NAMES.filter((n) => modelEntry(n)?.capabilities.covariates.includes('historical')).join(', ');
  const message = `model '${model.name}' does not use historical covariates; models that do: ${users}`;
  const columnsKey = query.input.columns ? 'columns' : 'schema';
  const errors: FieldError[] = [
    ...summariseRoles(inputColumns(query)).historical.map((name) => requestField(['input', columnsKey, name], message)),
    ...(query.covariates ?? []).map((_, i) => requestField(['covariates', i], message)),
  ];
  if (errors.length > 0) throw invalidRequest('the query does not fit the chosen model', errors);
  return model;
}

interface Planned {
  series: PreparedSeries;
  cutoff: number;
  /** Steps of history up to and including the cutoff. */
  seen: number;
}

/** Every (series, cutoff) to forecast: a cutoff before a series starts or after it ends is skipped for it. */
function plan(prepared: PreparedData, cutoffs: number[] | null): Planned[] {
  const out: Planned[] = [];
  for (const series of prepared.series) {
    const last = addDuration(series.start, prepared.freq, series.length - 1);
    for (const cutoff of cutoffs ?? [last]) {
      if (cutoff < series.start || cutoff > last) continue;
      out.push({ series, cutoff, seen: stepsBetween(series.start, cutoff, prepared.freq) + 1 });
    }
  }
  return out;
}

const seriesName = (prepared: PreparedData, s: PreparedSeries) =>
  prepared.identifiers.flatMap((name, i) => (s.ids[i] === null ? [] : [`${name}=${s.ids[i]}`])).join(', ') || 'the series';

export async function runBetaForecast(
  engine: Engine,
  db: DuckDBInstance,
  query: BetaQuery,
  modelName: string,
  sources: BetaSources,
): Promise<{ body: BetaResponse; timings: BetaTimings; series: number }> {
  const model = checkBetaQueryAgainstModel(query, modelName, engine.settings.models);
  const t0 = performance.now();
  const prepared = await withConnection(db, (c) => prepareSeries(c, query, sources)).catch((error: unknown) => {
    throw asMemoryRefusal(error) ?? error;
  });
  const t1 = performance.now();

  const { freq } = prepared;
  const horizon = wholeSteps(duration(query.prediction_length), freq)!;
  const context = query.context ? wholeSteps(duration(query.context), freq)! : null;
  const levels = quantileLevels(query.quantiles);
  const season = seasonLength(model.name, null, seasonLengthFor(freq));
  const span = { first: Infinity, last: -Infinity };
  for (const s of prepared.series) {
    span.first = Math.min(span.first, s.start);
    span.last = Math.max(span.last, addDuration(s.start, freq, s.length - 1));
  }
  const planned = plan(prepared, resolveCutoffs(query.cutoff, freq, horizon, span));
  if (planned.length === 0) {
    throw refuseField(
      { root: 'request', path: ['cutoff'] },
      `no series has data at any cutoff (the data runs from ${isoTimestamp(span.first)} to ${isoTimestamp(span.last)})`,
    );
  }
  const tasks: ForecastTask[] = planned.flatMap((p) =>
    p.series.targets.map((values) => ({
      history: values.slice(context === null ? 0 : Math.max(0, p.seen - context), p.seen),
      horizon,
      quantiles: levels,
      seasonLength: season,
    })),
  );
  const targetCount = prepared.targets.length;
  const t2 = performance.now();
  const batch = { model, tasks, coupled: couplesSeries(model, { crossLearning: false, covariates: false }), lane: 'interactive' as const };
  const outputs = await runTasks(engine, batch, (i) => {
    const p = planned[Math.floor(i / targetCount)];
    const where = `${seriesName(prepared, p.series)} at cutoff ${isoTimestamp(p.cutoff)}, target '${prepared.targets[i % targetCount]}'`;
    return { forecast: where, subject: where, field: { root: 'request', path: ['input', 'source'] }, fieldMessage: (reason) => `${where}: ${reason}` };
  });
  const t3 = performance.now();

  const keptIdentifiers = prepared.identifiers.filter((name) => prepared.levels.some((l) => l.kept.includes(name)));
  const builder = new BetaResponseBuilder(keptIdentifiers, prepared.targets, levels.map(quantileKey));
  const spanText = isoDuration(freq);
  planned.forEach((p, i) => {
    const ids = Object.fromEntries(prepared.identifiers.map((name, j) => [name, p.series.ids[j]]));
    const cutoffText = isoTimestamp(p.cutoff);
    for (let h = 1; h <= horizon; h++) builder.addRow(ids, isoTimestamp(addDuration(p.cutoff, freq, h)), cutoffText, isoDuration(freq, h), spanText);
    const known = Math.max(0, Math.min(horizon, p.series.length - p.seen));
    const metrics: Record<string, Metrics> = {};
    prepared.targets.forEach((target, j) => {
      const result = outputs[i * targetCount + j];
      const values = p.series.targets[j];
      for (let h = 0; h < horizon; h++)
        builder.addPrediction(
          target,
          result.mean[h],
          result.quantiles.map((q) => q[h]),
          h < known ? values[p.seen + h] : null,
        );
      if (known > 0)
        metrics[target] = computeMetrics(
          values.subarray(p.seen, p.seen + known),
          result.mean.subarray(0, known),
          levels,
          result.quantiles.map((q) => q.subarray(0, known)),
        );
    });
    if (known > 0) builder.addMetrics(ids, cutoffText, known, metrics);
  });
  const t4 = performance.now();
  return { body: builder.body, timings: { schemaMs: t1 - t0, modelMs: t3 - t2, assembleMs: t2 - t1 + (t4 - t3) }, series: prepared.series.length };
}
