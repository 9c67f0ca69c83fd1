import type { DuckDBInstance } from '@duckdb/node-api';
import { MODEL_NAMES, modelEntry, type ModelEntry } from '../../models/registry.ts';
import type { ForecastTask } from '../../models/types.ts';
import { ForecastFailedError, RequestError, type FieldError } from '../errors.ts';
import { computeMetrics, type Metrics } from '../metrics.ts';
import { requireRunnableModel } from '../model-checks.ts';
import { quantileKey } from '../quantile-key.ts';
import { DEFAULT_QUANTILES } from '../request-schema.ts';
import { runLocalTasks } from '../worker-pool.ts';
import { resolveCutoffs } from './cutoffs.ts';
import { addDuration, duration, isoDuration, isoTimestamp, seasonLengthFor, stepsBetween, wholeSteps } from './duration.ts';
import { asMemoryRefusal, withConnection } from './duckdb.ts';
import { prepareSeries, type PreparedData, type PreparedSeries } from './prepare.ts';
import { inputColumns, type BetaQuery } from './query-schema.ts';
import { summariseRoles } from './query-rules.ts';
import { BetaResponseBuilder, type BetaResponse } from './response.ts';
import type { BetaSources } from './sources.ts';
import { QUERY_PATH } from './validation.ts';

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
export function checkBetaQueryAgainstModel(query: BetaQuery, modelName: string): ModelEntry {
  const model = requireRunnableModel(modelName);
  if (model.capabilities.covariates.includes('historical')) return model;
  const users = MODEL_NAMES.filter((n) => modelEntry(n)?.capabilities.covariates.includes('historical')).join(', ');
  const message = `model '${model.name}' does not use historical covariates; models that do: ${users}`;
  const columnsKey = query.input.columns ? 'columns' : 'schema';
  const errors: FieldError[] = [
    ...summariseRoles(inputColumns(query)).historical.map((name) => ({ path: `${QUERY_PATH}.input.${columnsKey}.${name}`, message })),
    ...(query.covariates ?? []).map((_, i) => ({ path: `${QUERY_PATH}.covariates[${i}]`, message })),
  ];
  if (errors.length > 0) throw new RequestError(422, 'invalid_request', 'the query does not fit the chosen model', errors);
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
  db: DuckDBInstance,
  query: BetaQuery,
  modelName: string,
  sources: BetaSources,
): Promise<{ body: BetaResponse; timings: BetaTimings; series: number }> {
  const model = checkBetaQueryAgainstModel(query, modelName);
  const t0 = performance.now();
  const prepared = await withConnection(db, (c) => prepareSeries(c, query, sources)).catch((error: unknown) => {
    throw asMemoryRefusal(error) ?? error;
  });
  const t1 = performance.now();

  const { freq } = prepared;
  const horizon = wholeSteps(duration(query.prediction_length), freq)!;
  const context = query.context ? wholeSteps(duration(query.context), freq)! : null;
  const levels = query.quantiles ?? DEFAULT_QUANTILES;
  const seasonLength = model.name === 'naive' ? 1 : seasonLengthFor(freq);
  const span = { first: Infinity, last: -Infinity };
  for (const s of prepared.series) {
    span.first = Math.min(span.first, s.start);
    span.last = Math.max(span.last, addDuration(s.start, freq, s.length - 1));
  }
  const planned = plan(prepared, resolveCutoffs(query.cutoff, freq, horizon, span));
  if (planned.length === 0) {
    const message = `no series has data at any cutoff (the data runs from ${isoTimestamp(span.first)} to ${isoTimestamp(span.last)})`;
    throw new RequestError(422, 'invalid_request', message, [{ path: `${QUERY_PATH}.cutoff`, message }]);
  }
  const tasks: ForecastTask[] = planned.flatMap((p) =>
    p.series.targets.map((values) => ({
      history: values.slice(context === null ? 0 : Math.max(0, p.seen - context), p.seen),
      horizon,
      quantiles: levels,
      seasonLength,
    })),
  );
  const t2 = performance.now();
  const results = await runLocalTasks(model.name, tasks);
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
      const result = results[i * prepared.targets.length + j];
      const where = `${seriesName(prepared, p.series)} at cutoff ${cutoffText}, target '${target}'`;
      if (!result.ok) {
        if (result.inputError)
          throw new RequestError(422, 'invalid_request', `model '${model.name}' cannot forecast ${where}: ${result.message}`, [
            { path: `${QUERY_PATH}.input.source`, message: `${where}: ${result.message}` },
          ]);
        throw new ForecastFailedError(`model '${model.name}' failed on ${where}: ${result.message}`);
      }
      if (!result.mean.every(Number.isFinite) || !result.quantiles.every((q) => q.every(Number.isFinite)))
        throw new ForecastFailedError(`model '${model.name}' produced non-finite values for ${where}`);
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
