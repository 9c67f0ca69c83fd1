import type { ModelEntry } from '../../models/contract/model-registry.ts';
import type { ConformalSettings, ForecastOutput, ForecastTask, GlobalBatchOptions, TaskCovariates } from '../../models/contract/model-interface.ts';
import type { Engine } from '../engine.ts';
import { refuseField } from '../errors.ts';
import { computeMetrics } from '../accuracy-metrics.ts';
import type { Metrics } from '../response-schema.ts';
import type { RefitPolicy } from '../request-schema.ts';
import { planTasks, type SeriesTimeline } from '../series-timeline.ts';
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
    ...fromConfig,
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

export interface PlannedCutoff {
  series: PreparedSeries;
  cutoff: number;
  /** Steps of history up to and including the cutoff. */
  seen: number;
  /** `seen` at the cutoff whose fit this forecast uses (the refit policy): its own when refitted. */
  fittedAt: number;
}

/**
 * Whether the model's forecasts of the query's series depend on each other (a global model
 * learning across them, cross-learning, or a regression over covariates): then a job forecasts
 * them in one chunk, as the synchronous endpoint forecasts them in one call.
 */
export function queryCouplesSeries(query: ResolvedBetaQuery, model: ModelEntry, settings: BacktestSettings): boolean {
  const covariates = query.roles.historical.length > 0 || (query.parsed.covariates?.length ?? 0) > 0;
  return couplesSeries(model, { crossLearning: settings.batch.crossLearning === true, covariates });
}

/** Every (series, cutoff) to forecast; a series' cutoffs are all planned together, so the refit policy counts them all. */
export function planCutoffs(
  series: readonly PreparedSeries[],
  cutoffs: readonly number[] | null,
  freq: Duration,
  refit: RefitPolicy = 'every',
): PlannedCutoff[] {
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
export function historicalCovariates(series: PreparedSeries, from: number, to: number): TaskCovariates | undefined {
  if (series.covariates.length === 0) return undefined;
  const hist = Object.fromEntries(series.covariates.map((values, j) => [`c${j}`, Array.from(values.subarray(from, to))]));
  return { hist, future: {}, static: {} };
}

/**
 * Each (series, target) of the plan as a timeline for the one planner (series-timeline.ts): the
 * target's values, the series' cutoffs as creation points, and, for a global model, the times of
 * its steps and of a horizon past its end. Numbered as the series first appear, targets innermost.
 * A series' cutoffs are consecutive in `planned`, as planCutoffs plans them.
 */
function timelinesOf(planned: readonly PlannedCutoff[], settings: BacktestSettings, global: boolean): { timelines: SeriesTimeline[]; firsts: number[] } {
  const timelines: SeriesTimeline[] = [];
  // The index in `planned` of each series' first cutoff: its cutoffs follow it in order.
  const firsts: number[] = [];
  planned.forEach((p, i) => {
    if (i > 0 && planned[i - 1].series === p.series) {
      for (const t of timelines.slice(-p.series.targets.length)) (t.points as number[]).push(p.seen);
      return;
    }
    const position = firsts.length;
    firsts.push(i);
    const times = global
      ? Float64Array.from({ length: p.series.length + settings.horizon }, (_, k) => addDuration(p.series.start, settings.freq, k))
      : undefined;
    const series = p.series;
    const covariates = series.covariates.length > 0 ? (from: number, to: number) => historicalCovariates(series, from, to)! : undefined;
    series.targets.forEach((values, target) => {
      timelines.push({
        seriesIndex: position * series.targets.length + target,
        // The series' own buffer: a chunk's targets are views of one large one, which a task's view would carry to the threads whole.
        values: values.slice(),
        points: [p.seen],
        ...(times && { times }),
        ...(covariates && { covariates }),
      });
    });
  });
  return { timelines, firsts };
}

/** Runs one task per (planned forecast, target), in that order. */
export function runBacktest(
  engine: Engine,
  model: ModelEntry,
  settings: BacktestSettings,
  planned: readonly PlannedCutoff[],
  names: { identifiers: readonly string[]; targets: readonly string[] },
  lane: TaskBatch['lane'],
): Promise<ForecastOutput[]> {
  const targetCount = names.targets.length;
  const { timelines, firsts } = timelinesOf(planned, settings, model.capabilities.global);
  const plan = {
    horizon: settings.horizon,
    quantiles: settings.levels,
    context: settings.context,
    maxContext: model.capabilities.maxContext,
    settings,
    refit: settings.refit,
  };
  // Back into plan order, targets innermost: timeline (series s, target k), point j is task (firsts[s] + j) x targets + k.
  const tasks: ForecastTask[] = new Array(planned.length * targetCount);
  for (const p of planTasks(timelines, plan)) {
    const [series, target] = [Math.floor(p.timeline / targetCount), p.timeline % targetCount];
    tasks[(firsts[series] + p.position) * targetCount + target] = p.task;
  }
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
  planned: PlannedCutoff;
  target: number;
  output: ForecastOutput;
  /** The true values after the cutoff, where the data has them (at most `horizon`). */
  actuals: Float64Array;
  /** Null when no step after the cutoff is known. */
  metrics: Metrics | null;
  /** Set when the query reconciles: `output` is then the reconciled forecast. */
  reconciled?: ReconciledExtras;
}

/** What a reconciled forecast adds: its level's name and the base (unreconciled) mean. */
export interface ReconciledExtras {
  readonly level: string;
  readonly baseMean: ArrayLike<number>;
}

/**
 * Each forecast's values, actuals and metrics, in plan order (targets innermost); `reconciled`,
 * when given, is aligned with `outputs`, which then hold the reconciled forecasts.
 */
export function* targetForecasts(
  planned: readonly PlannedCutoff[],
  outputs: readonly ForecastOutput[],
  settings: BacktestSettings,
  reconciled?: readonly ReconciledExtras[],
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
      yield { planned: p, target, output, actuals, metrics, ...(reconciled && { reconciled: reconciled[i] }) };
    }
  }
}
