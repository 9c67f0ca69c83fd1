import type { ModelEntry } from '../../models/contract/model-registry.ts';
import type { ConformalSettings, ForecastOutput, ForecastTask, GlobalBatchOptions, TaskCovariates } from '../../models/contract/model-interface.ts';
import type { Engine } from '../engine.ts';
import { refuseField } from '../errors.ts';
import { computeMetrics } from '../accuracy-metrics.ts';
import type { Metrics } from '../response-schema.ts';
import type { RefitPolicy } from '../request-schema.ts';
import { taskSettings } from '../task-settings.ts';
import { couplesSeries, refitDates, runTasks, type TaskBatch } from '../tasks.ts';
import { resolveCutoffs, type DataSpan } from './cutoffs.ts';
import { addDuration, isoTimestamp, seasonLengthFor, seasonLengthsFor, stepsBetween, type Duration } from './duration.ts';
import type { PreparedSeries } from './prepare.ts';
import type { ResolvedBetaQuery } from './resolved-query.ts';

/**
 * The beta backtest core, shared by the synchronous endpoint and beta jobs: which (series,
 * cutoff) pairs to forecast, their tasks, the model run, and each forecast's values with its
 * actuals and metrics. The callers differ only in where series come from (all in memory, or a
 * chunk of a job) and where results go (a JSON body, or Parquet parts).
 */

export interface BacktestSettings {
  freq: Duration;
  horizon: number;
  /** Steps of history a task sees at most; null for all of it. */
  context: number | null;
  levels: readonly number[];
  season: number;
  /** Every seasonal period, for a model that takes several. */
  seasonLengths?: readonly number[];
  /** A local model's own options from model_config, carried on each task. */
  options?: unknown;
  /** Conformal quantiles, when model_config asks for them. */
  conformal?: ConformalSettings;
  /** What a global model gets with the batch: cross-learning and its own options. */
  batch: GlobalBatchOptions;
  /** The refit policy in effect: the query's for a model that can keep a fit, else `every`. */
  refit: RefitPolicy;
  /** Whether the answer says which cutoffs were refitted: the query asked for a policy. */
  reportRefitted: boolean;
}

export function backtestSettings(query: ResolvedBetaQuery, model: ModelEntry): BacktestSettings {
  const { parsed, freq } = query;
  const fromConfig = taskSettings(parsed.model_config ?? null, model, { season: seasonLengthFor(freq), seasons: seasonLengthsFor(freq) });
  return {
    freq,
    horizon: query.horizon,
    context: query.context,
    levels: query.levels,
    season: fromConfig.season,
    ...(fromConfig.seasonLengths && { seasonLengths: fromConfig.seasonLengths }),
    ...(fromConfig.options !== undefined && { options: fromConfig.options }),
    ...(fromConfig.conformal && { conformal: fromConfig.conformal }),
    batch: fromConfig.batch,
    refit: model.capabilities.reusesFit ? parsed.refit : 'every',
    reportRefitted: parsed.refit !== 'every',
  };
}

/** A series as planning needs it: where it starts and how long it is. */
export type SeriesExtent = Pick<PreparedSeries, 'start' | 'length'>;

export const lastStep = (s: SeriesExtent, freq: Duration): number => addDuration(s.start, freq, s.length - 1);

export function dataSpan(series: Iterable<SeriesExtent>, freq: Duration): DataSpan {
  const span = { first: Infinity, last: -Infinity };
  for (const s of series) {
    span.first = Math.min(span.first, s.start);
    span.last = Math.max(span.last, lastStep(s, freq));
  }
  return span;
}

/** The query's cutoffs over the data; null means each series' own last step. */
export const queryCutoffs = (query: ResolvedBetaQuery, span: DataSpan): number[] | null => resolveCutoffs(query.parsed.cutoff, query.freq, query.horizon, span);

/** The cutoffs at which a series is forecast: one before it starts or after it ends is skipped for it. */
export function seriesCutoffs(series: SeriesExtent, cutoffs: readonly number[] | null, freq: Duration): number[] {
  const last = lastStep(series, freq);
  return (cutoffs ?? [last]).filter((cutoff) => cutoff >= series.start && cutoff <= last);
}

export function noForecastRefusal(span: DataSpan) {
  return refuseField(
    { root: 'request', path: ['cutoff'] },
    `no series has data at any cutoff (the data runs from ${isoTimestamp(span.first)} to ${isoTimestamp(span.last)})`,
  );
}

export interface PlannedForecast {
  series: PreparedSeries;
  cutoff: number;
  /** Steps of history up to and including the cutoff. */
  seen: number;
  /** `seen` at the cutoff whose fit this forecast uses (the refit policy): its own when refitted. */
  fittedAt: number;
}

/** Every (series, cutoff) to forecast; a series' cutoffs are all planned together, so the refit policy counts them all. */
export function planForecasts(
  series: readonly PreparedSeries[],
  cutoffs: readonly number[] | null,
  freq: Duration,
  refit: RefitPolicy = 'every',
): PlannedForecast[] {
  return series.flatMap((s) => {
    const seen = seriesCutoffs(s, cutoffs, freq).map((cutoff) => ({ cutoff, seen: stepsBetween(s.start, cutoff, freq) + 1 }));
    const anchors = refitDates(
      seen.map((c) => c.seen),
      refit,
    );
    return seen.map((c) => ({ series: s, ...c, fittedAt: anchors.get(c.seen)! }));
  });
}

/** How messages name a series: its identifier values, or "the series" when it has none. */
export const seriesName = (identifiers: readonly string[], s: PreparedSeries): string =>
  identifiers.flatMap((name, i) => (s.ids[i] === null ? [] : [`${name}=${s.ids[i]}`])).join(', ') || 'the series';

/**
 * A series' historical columns and joined covariates over a task's history, as historical
 * covariates (NaN where a step has none). They are named by position (`c0`, `c1`, ...): a job's
 * chunks know how many there are, not their names, and a model only needs them told apart.
 */
function historicalCovariates(series: PreparedSeries, from: number, to: number): TaskCovariates | undefined {
  if (series.covariates.length === 0) return undefined;
  const hist = Object.fromEntries(series.covariates.map((values, j) => [`c${j}`, Array.from(values.subarray(from, to))]));
  return { hist, future: {}, static: {} };
}

/** Runs one task per (planned forecast, target), in that order. */
export function runBacktest(
  engine: Engine,
  model: ModelEntry,
  settings: BacktestSettings,
  planned: readonly PlannedForecast[],
  names: { identifiers: readonly string[]; targets: readonly string[] },
  lane: TaskBatch['lane'],
): Promise<ForecastOutput[]> {
  const { horizon, context, levels, season, seasonLengths, options, conformal, freq } = settings;
  const targetCount = names.targets.length;
  // Under a refit policy each task names the fit it uses, keyed by its series and target (the
  // model threads cache fits by seriesIndex and date).
  const keepsFits = settings.refit !== 'every';
  const positions = new Map<PreparedSeries, number>();
  const position = (s: PreparedSeries) => positions.get(s) ?? (positions.set(s, positions.size), positions.size - 1);
  // Global models learn across series and from the calendar: they need each task's series
  // (one per series and target) and the timestamps of its history and horizon.
  // Per series, once: its position and the timestamps of its steps and a horizon past its end.
  const timelines = model.capabilities.global ? new Map<PreparedSeries, { position: number; times: Float64Array }>() : null;
  const timeline = (s: PreparedSeries) => {
    let entry = timelines!.get(s);
    if (!entry) {
      entry = { position: timelines!.size, times: Float64Array.from({ length: s.length + horizon }, (_, k) => addDuration(s.start, freq, k)) };
      timelines!.set(s, entry);
    }
    return entry;
  };
  const tasks: ForecastTask[] = planned.flatMap((p) => {
    const from = context === null ? 0 : Math.max(0, p.seen - context);
    const global = timelines ? timeline(p.series) : null;
    const fitFrom = context === null ? 0 : Math.max(0, p.fittedAt - context);
    const covariates = historicalCovariates(p.series, from, p.seen);
    return p.series.targets.map((values, target) => ({
      history: values.slice(from, p.seen),
      horizon,
      quantiles: levels,
      seasonLength: season,
      ...(seasonLengths && { seasonLengths }),
      ...(options !== undefined && { options }),
      ...(conformal && { conformal }),
      ...(global && { times: global.times.subarray(from, p.seen + horizon), seriesIndex: global.position * targetCount + target }),
      ...(covariates && { covariates }),
      ...(keepsFits && {
        seriesIndex: position(p.series) * targetCount + target,
        refit: { fcd: p.fittedAt, history: values.slice(fitFrom, p.fittedAt), since: p.seen - p.fittedAt },
      }),
    }));
  });
  const withCovariates = planned.some((p) => p.series.covariates.length > 0);
  const coupled = couplesSeries(model, { crossLearning: settings.batch.crossLearning === true, covariates: withCovariates });
  const batch = { model, tasks, coupled, options: settings.batch, lane };
  return runTasks(engine, batch, (i) => {
    const p = planned[Math.floor(i / targetCount)];
    const where = `${seriesName(names.identifiers, p.series)} at cutoff ${isoTimestamp(p.cutoff)}, target '${names.targets[i % targetCount]}'`;
    return { forecast: where, subject: where, field: { root: 'request', path: ['input', 'source'] }, fieldMessage: (reason) => `${where}: ${reason}` };
  });
}

/** One forecast of one target, as both result writers record it. */
export interface TargetForecast {
  planned: PlannedForecast;
  target: number;
  output: ForecastOutput;
  /** The true values after the cutoff, where the data has them (at most `horizon`). */
  actuals: Float64Array;
  /** Null when no step after the cutoff is known. */
  metrics: Metrics | null;
}

/** Each forecast's values, actuals and metrics, in plan order (targets innermost). */
export function* targetForecasts(
  planned: readonly PlannedForecast[],
  outputs: readonly ForecastOutput[],
  settings: BacktestSettings,
): Generator<TargetForecast> {
  let i = 0;
  for (const p of planned) {
    const known = Math.max(0, Math.min(settings.horizon, p.series.length - p.seen));
    for (let target = 0; target < p.series.targets.length; target++, i++) {
      const output = outputs[i];
      const actuals = p.series.targets[target].subarray(p.seen, p.seen + known);
      const metrics =
        known > 0
          ? computeMetrics(
              actuals,
              output.mean.subarray(0, known),
              settings.levels,
              output.quantiles.map((q) => q.subarray(0, known)),
            )
          : null;
      yield { planned: p, target, output, actuals, metrics };
    }
  }
}
