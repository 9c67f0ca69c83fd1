import {
  ModelInputError,
  type ContextSeries,
  type FitReuse,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
  type LocalModel,
  type TaskCovariates,
} from '../../contract/model-interface.ts';

/**
 * Runs an ensemble's members on a batch: every task's whole history (with the members' own
 * quantiles, the fallback for a history too short to validate on), and the rolling-origin
 * windows inside it (the last `horizon` steps held out, then the `horizon` before them, ...),
 * whose errors weigh and calibrate the combination.
 */

export type MemberModel = LocalModel | GlobalModel;

export interface Member {
  readonly name: string;
  readonly model: MemberModel;
}

/** One member's forecasts: null where it refused the task (ModelInputError), with the reason. */
export interface MemberRun {
  readonly full: (ForecastOutput | null)[];
  /** [task][window]: the mean forecast of each window, null where the member refused it. */
  readonly windows: (Float64Array | null)[][];
  /** The first refusal's reason, for an error when no member can forecast a task. */
  readonly refusal: string | null;
}

/** Where each window of a task ends its history: windows oldest first, each keeps one observation to train on. */
export function windowCuts(historyLength: number, horizon: number, windows: number): number[] {
  const count = Math.min(windows, Math.floor((historyLength - 1) / horizon));
  return Array.from({ length: Math.max(0, count) }, (_, w) => historyLength - (count - w) * horizon);
}

const cutCovariates = (c: TaskCovariates, cut: number, horizon: number): TaskCovariates => ({
  hist: Object.fromEntries(Object.entries(c.hist).map(([k, v]) => [k, v.slice(0, cut)])),
  future: Object.fromEntries(Object.entries(c.future).map(([k, v]) => [k, v.slice(0, cut + horizon)])),
  static: c.static,
});

/**
 * The task as it stood `cut` observations into its history: the window's forecast is compared with
 * what followed. `options` replace the member's options there (windowOptions in RunSettings).
 */
export function windowTask(task: ForecastTask, cut: number, options: unknown = task.options): ForecastTask {
  const { horizon } = task;
  return {
    ...task,
    options,
    history: task.history.subarray(0, cut),
    quantiles: [],
    ...(task.times && { times: task.times.subarray(0, cut + horizon) }),
    ...(task.covariates && { covariates: cutCovariates(task.covariates, cut, horizon) }),
    conformal: undefined,
    refit: undefined,
  };
}

/**
 * Rolling windows, horizon after horizon, that weigh the members and calibrate the combination
 * are forecast by one model of a global member, trained up to the earliest window's cut: it saw
 * nothing past any window's cut, the weights compare every member on the same windows, and it
 * costs one fit where a model per cut cost several (BENCHMARKS.md, "ensemble on multi-seasonal
 * series"). Only where the tasks' histories end together: where they end apart, the earliest cut
 * of the batch could be years before a later series' own windows, and its windows would come from
 * a model that saw none of its recent rows, so the member groups the cuts as it does alone. Where
 * only the earliest and last windows run, the last stands in for the final forecast in a pool
 * (pooled-calibration.ts), so it keeps a model as fresh as the final one.
 */
export function windowBatch(tasks: readonly ForecastTask[], cuts: readonly (readonly number[])[]): GlobalBatchOptions {
  if (!cuts.some((c) => c.length > 2)) return {};
  const ends = new Set(tasks.map((task) => task.times?.[task.history.length - 1]));
  return ends.size === 1 ? { options: { maxModels: 1 } } : {};
}

/** The refusal a member's non-finite forecast is reported with, where no member can forecast a task. */
const NOT_FINITE = 'its forecast held a value that is not finite';

/**
 * A forecast with a mean that is not finite counts as refused: one NaN in a window would reach the
 * combination's weights and every series of its pool.
 */
function finiteOrNull<T extends ForecastOutput | Float64Array>(forecast: T | null): T | null {
  if (forecast === null) return null;
  const mean = forecast instanceof Float64Array ? forecast : forecast.mean;
  return mean.every(Number.isFinite) ? forecast : null;
}

function refusal(err: unknown): string {
  if (err instanceof ModelInputError) return err.message;
  throw err;
}

/** A task's window at a cut, with the member's window options. */
type WindowOf = (task: ForecastTask, cut: number) => ForecastTask;

/**
 * A local member's window forecasts of one task from one fit: fitted at the earliest window, its
 * states run through the observations since for each later one, as between a backtest's refits
 * (LocalModel.reuse). The windows then cost one fit, not one each
 * (docs/decisions/082-ensemble-windows-carry-one-fit.md).
 */
function carriedWindows(reuse: FitReuse<unknown>, task: ForecastTask, cuts: readonly number[], windowOf: WindowOf): Float64Array[] {
  const fitHistory = task.history.subarray(0, cuts[0]);
  const fitted = reuse.fit(windowOf(task, cuts[0]));
  return cuts.map((cut) => reuse.forecast(fitted, { ...windowOf(task, cut), refit: { fcd: cuts[0], history: fitHistory, since: cut - cuts[0] } }).mean);
}

/** How runMember runs a member's windows. */
export interface RunSettings {
  /** Fit each task once, at its earliest window, and carry that fit through the later ones. */
  readonly carryFit?: boolean;
  /**
   * The member's options in its windows, in place of the tasks' own. Windows are read for their
   * means alone (seating, weights, a pool's errors), never for their quantiles.
   */
  readonly windowOptions?: object;
}

/**
 * Runs one member on a share of the tasks: here, in order (runMember), or on the engine's model
 * threads, so that a large request's members fit on every core (engine/threads/pool.ts). The
 * ensemble combines what it hands back the same way, wherever it ran.
 */
export type MemberRunner = (
  member: Member,
  tasks: readonly ForecastTask[],
  cuts: readonly number[][],
  context: readonly ContextSeries[],
  settings: RunSettings,
) => Promise<MemberRun>;

/** One member's runs of consecutive shares of the tasks, as one run of them all; the first share's refusal first. */
export function joinMemberRuns(parts: readonly MemberRun[]): MemberRun {
  return {
    full: parts.flatMap((part) => part.full),
    windows: parts.flatMap((part) => part.windows),
    refusal: parts.find((part) => part.refusal !== null)?.refusal ?? null,
  };
}

export async function runMember(
  member: Member,
  tasks: readonly ForecastTask[],
  cuts: readonly number[][],
  context: readonly ContextSeries[],
  { carryFit = false, windowOptions }: RunSettings = {},
): Promise<MemberRun> {
  const { model } = member;
  const windowOf: WindowOf = (task, cut) => windowTask(task, cut, windowOptions);
  let reason: string | null = null;
  // A whole-history forecast that is not finite is refused, with its own reason where none came first.
  const keepFinite = (forecast: ForecastOutput | null): ForecastOutput | null => {
    const kept = finiteOrNull(forecast);
    if (forecast !== null && kept === null) reason ??= NOT_FINITE;
    return kept;
  };
  if ('forecastBatch' in model) {
    // A global member learns across the batch: one call for the whole histories, one for every
    // window (trained only on what was known at the window's cut).
    const windowTasks = tasks.flatMap((task, i) => cuts[i].map((cut) => windowOf(task, cut)));
    let full: (ForecastOutput | null)[];
    let flat: (Float64Array | null)[];
    try {
      full = await model.forecastBatch(tasks, context);
    } catch (err) {
      reason = refusal(err);
      return { full: tasks.map(() => null), windows: cuts.map((c) => c.map(() => null)), refusal: reason };
    }
    try {
      flat = windowTasks.length > 0 ? (await model.forecastBatch(windowTasks, context, windowBatch(tasks, cuts))).map((o) => o.mean) : [];
    } catch (err) {
      reason = refusal(err);
      flat = windowTasks.map(() => null);
    }
    let at = 0;
    return { full: full.map(keepFinite), windows: cuts.map((c) => c.map(() => finiteOrNull(flat[at++]))), refusal: reason };
  }
  const attempt = <T>(run: () => T): T | null => {
    try {
      return run();
    } catch (err) {
      reason ??= refusal(err);
      return null;
    }
  };
  const full = tasks.map((task) => keepFinite(attempt(() => model.forecast(task))));
  const { reuse } = model;
  const windows = tasks.map((task, i) => {
    if (!full[i]) return cuts[i].map(() => null);
    // Where the earliest window refuses the fit, each window is tried on its own.
    const carried = carryFit && reuse && cuts[i].length >= 2 ? attempt(() => carriedWindows(reuse, task, cuts[i], windowOf)) : null;
    return (carried ?? cuts[i].map((cut) => attempt(() => model.forecast(windowOf(task, cut)).mean))).map(finiteOrNull);
  });
  return { full, windows, refusal: reason };
}
