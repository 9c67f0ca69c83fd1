import { conformalQuantiles } from '../../numerics/conformal.ts';
import { combine, memberQuantiles, memberWeights, windowErrors } from './combine.ts';
import { memberLevels, mixesMembers, mixtureQuantiles } from './member-mixture.ts';
import { knownToEach, mayPool, poolCalibration, pooledQuantiles, poolsOf, recentScale, type LastWindow, type PoolCalibration } from './pooled-calibration.ts';
import { pooledMemberErrors, scaledMemberErrors, type LastForecasts, type PooledErrors } from './pooled-weights.ts';
import { runMember, windowCuts, type Member, type MemberModel, type MemberRun, type MemberRunner } from './members.ts';
import { DEFAULT_WINDOWS, defaultProfile, type Combining, type EnsembleProfile } from './profiles.ts';
import {
  ModelInputError,
  type Combination,
  type ContextSeries,
  type EnsembleSettings,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
} from '../../contract/model-interface.ts';

/**
 * `ensemble`: a combination of statistical models and `svc-global`, weighed and calibrated on the
 * request's own histories. Every member forecasts the whole history and the rolling-origin windows
 * inside it that the combination reads (models/families/ensemble/members.ts, windowsToRun); the
 * members' window errors give the weights (models/families/ensemble/combine.ts). Each series gets
 * its members, combination and quantiles from its profile (profiles.ts) unless the request names
 * them. Quantiles come from one of three places: the combined forecast's window errors (conformal
 * quantiles, models/numerics/conformal.ts: on long histories the windows hold hundreds of
 * points); the members' own quantiles around the combined mean (their mixture on a series without
 * a season, member-mixture.ts); or the last-window errors of many series pooled
 * (pooled-calibration.ts: a short history's own windows hold too few errors, and the early ones
 * train on a fraction of it). Figures: BENCHMARKS.md, "ensemble on short series".
 *
 * A member that refuses a task (too short a history) sits that series out; a history too short
 * for two windows gets the members' equal-weight mean and the mean of their quantiles at each
 * level (nothing of its own to calibrate on).
 */

/** Loads a member by model name (the registry's loaders, so that this module does not import the registry). */
export type MemberLoader = (name: string) => Promise<MemberModel>;

export interface EnsembleRuns {
  /** Every task's window cuts, oldest first. */
  readonly cuts: number[][];
  readonly runs: MemberRun[];
  /** Which of those windows were run (windowsToRun); `runs[k].windows[i]` holds them in that order. */
  readonly ran: WindowsRun;
}

/**
 * Which windows a combination reads. Weights and conformal quantiles read every window. The
 * equal mean or median reads only which members could forecast the windows, and a member that can
 * forecast the earliest (shortest) window can forecast the later ones: on the short sets of
 * BENCHMARKS.md seating members by the earliest window and by all of them agreed on every series.
 * Pooled quantiles add the last window, whose errors they pool across series. Where a task has
 * fewer than two windows none is run: none would be read.
 */
export type WindowsRun = 'all' | 'earliest' | 'earliest-and-last';

export function windowsToRun({ combination, intervals }: Combining): WindowsRun {
  if (combination === 'weighted' || intervals === 'conformal') return 'all';
  return intervals === 'pooled' || combination === 'pooled' ? 'earliest-and-last' : 'earliest';
}

const covers = (ran: WindowsRun, needed: WindowsRun) => ran === 'all' || ran === needed || (ran === 'earliest-and-last' && needed === 'earliest');

/**
 * Members' own options inside the ensemble. `aets` estimates as R's `ets()`: the ensemble is as
 * accurate with it as with statsforecast's estimation, and much cheaper on weekly data, where R's
 * drops the 52-week season that `mstl` covers anyway (docs/decisions/008-aets-estimates-as-statsforecast.md).
 * `aarima` compares its candidates by their CSS fit on short series too, as R does on long ones:
 * the short profile's costliest member, and as accurate that way within the ensemble
 * (docs/decisions/059-ensemble-arima-search-on-short-series.md). It refits at most the two best
 * candidates by maximum likelihood and keeps the best one's CSS fit where both refits are refused:
 * R's walk down the list, refit after refused refit, was most of its cost on short seasonal series
 * (docs/decisions/098-ensemble-arima-refits-two-candidates.md).
 */
const MEMBER_OPTIONS: Readonly<Record<string, object>> = { aets: { estimation: 'r' }, aarima: { approximation: 'on', maxRefits: 2 } };

/**
 * Members' options in their windows, where they differ from MEMBER_OPTIONS. Windows are read for
 * their means alone. `aarima`'s exact refit moves its mean little and costs most of its search,
 * so its windows keep the search's CSS fit (docs/decisions/088-ensemble-arima-windows-keep-css-fit.md).
 */
const WINDOW_MEMBER_OPTIONS: Readonly<Record<string, object>> = { aarima: { approximation: 'on', maxRefits: 0 } };

const withMemberOptions = (name: string, tasks: readonly ForecastTask[]): readonly ForecastTask[] => {
  const options = MEMBER_OPTIONS[name];
  return options ? tasks.map((task) => ({ ...task, options })) : tasks;
};

/** The cuts of task windows to run; the last only where the task's pool may calibrate (poolable). */
function cutsToRun(cuts: number[], ran: WindowsRun, poolable: boolean): number[] {
  if (ran === 'all') return cuts;
  if (cuts.length < 2) return [];
  return ran === 'earliest' || !poolable ? cuts.slice(0, 1) : [cuts[0], cuts[cuts.length - 1]];
}

/**
 * Every member's forecasts of every task and the windows that `combining` reads (windowsToRun):
 * the part that costs, apart from the combination.
 */
export async function runMembers(
  members: readonly Member[],
  tasks: readonly ForecastTask[],
  context: readonly ContextSeries[],
  windows: number,
  combining: Combining,
  runner: MemberRunner = runMember,
): Promise<EnsembleRuns> {
  const ran = windowsToRun(combining);
  const cuts = tasks.map((t) => windowCuts(t.history.length, t.horizon, windows));
  // The last window costs about a whole fit: run it only where a pool can use it (pooled weights
  // can where quantiles cannot: one period's pools).
  const lastCut = (i: number) => (cuts[i].length >= 2 ? cuts[i][cuts[i].length - 1] : null);
  const poolable = ran === 'earliest-and-last' ? mayPool(tasks, lastCut, combining.combination === 'pooled') : [];
  const run = cuts.map((c, i) => cutsToRun(c, ran, poolable[i] ?? false));
  // Fits carried from the earliest window where every window runs (weights, conformal quantiles);
  // a pool's last window stands in for the final forecast, so it keeps a fit of its own.
  // Where the members' distributions are mixed, each is read at a grid of levels too (memberLevels).
  const asked = tasks.map((task) => (mixesMembers(task) ? { ...task, quantiles: memberLevels(task) } : task));
  // Every member at once: on the model threads their shares fill every core together.
  const runs: MemberRun[] = await Promise.all(
    members.map((member) => {
      const settings = { carryFit: ran === 'all', windowOptions: WINDOW_MEMBER_OPTIONS[member.name] };
      return runner(member, withMemberOptions(member.name, asked), run, context, settings);
    }),
  );
  return { cuts, runs, ran };
}

/**
 * The members that forecast task i (`able`), and those of them that forecast every window run
 * (`validated`: they are combined). A member whose forecast runs away from the history is left
 * out as a refusal is, unless every member's does.
 */
function seating({ runs }: EnsembleRuns, i: number, history: Float64Array): { able: number[]; validated: number[] } {
  const forecasting = runs.map((_, k) => k).filter((k) => runs[k].full[i] !== null);
  const reasonable = forecasting.filter((k) => withinReach(history, runs[k].full[i]!.mean));
  const able = reasonable.length > 0 ? reasonable : forecasting;
  return { able, validated: able.filter((k) => runs[k].windows[i].every((w) => w !== null)) };
}

/** How far past the history's range, in multiples of that range, a member's forecast may go. */
const REACH = 10;

/**
 * Whether a forecast stays within REACH ranges of the history's. Trends and growth stay well
 * inside; a diverging member does not (CES on a short intermittent series grows without bound, as
 * statsforecast's AutoCES does), and one such member would carry the combination with it.
 */
function withinReach(history: Float64Array, mean: Float64Array): boolean {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of history) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  // A constant history has no range: its level's size stands in (a unit where it is 0).
  const range = hi > lo ? hi - lo : Math.abs(hi) || 1;
  return mean.every((v) => v >= lo - REACH * range && v <= hi + REACH * range);
}

/**
 * The validated members' weights for task i: from their window errors when weighted, from their
 * pool's errors when pooled (equal where the pool weighs nobody), else equal.
 */
function combinedWeights(
  task: ForecastTask,
  i: number,
  { cuts, runs }: EnsembleRuns,
  combination: Combination,
  validated: number[],
  pooled: PooledErrors | null = null,
): number[] {
  if (combination === 'pooled')
    return memberWeights(
      combination,
      validated.map((k) => (pooled === null ? NaN : pooled[k] ** 2)),
    );
  if (combination !== 'weighted') return validated.map(() => 1 / validated.length);
  const actual = cuts[i].map((cut) => task.history.subarray(cut, cut + task.horizon));
  return memberWeights(
    combination,
    windowErrors(
      validated.map((k) => runs[k].windows[i] as Float64Array[]),
      actual,
    ),
  );
}

/**
 * Task i's last window combined as its whole history is, for pooled quantiles; null where the
 * task has fewer than two windows or no member forecast them all.
 */
function lastWindow(task: ForecastTask, i: number, runs: EnsembleRuns, { combination }: Combining, pooled: PooledErrors | null): LastWindow | null {
  const cuts = runs.cuts[i];
  const { validated } = seating(runs, i, task.history);
  if (!lastRan(runs, i) || validated.length === 0) return null;
  const weights = combinedWeights(task, i, runs, combination, validated, pooled);
  const last = (k: number) => runs.runs[k].windows[i][runs.runs[k].windows[i].length - 1]!;
  return { cut: cuts[cuts.length - 1], mean: combine(combination, validated.map(last), weights) };
}

/** Whether task i's last window was run: every window was, or the earliest and the last (not the earliest alone). */
const lastRan = ({ cuts, runs, ran }: EnsembleRuns, i: number) =>
  cuts[i].length >= 2 && (ran === 'all' || (ran === 'earliest-and-last' && runs[0].windows[i].length === 2));

/** Task i's last window as each member forecast it, for pooled weights; null where it was not run. */
function lastForecasts(runs: EnsembleRuns, i: number): LastForecasts | null {
  if (!lastRan(runs, i)) return null;
  const cuts = runs.cuts[i];
  return { cut: cuts[cuts.length - 1], byMember: runs.runs.map((run) => run.windows[i][run.windows[i].length - 1] ?? null) };
}

/** What a task's pool gives it: the calibration of pooled quantiles, the members' errors for pooled weights. */
export interface Pooling {
  readonly calibration: PoolCalibration | null;
  readonly errors: PooledErrors | null;
}

const NO_POOLING: Pooling = { calibration: null, errors: null };

/**
 * The ensemble's forecast of task `i` from its members' runs. `pooling` gives what the task's pool
 * holds (combineGroup): the calibration for pooled quantiles, the members' errors for pooled
 * weights. Without them, or where its pool is too small, the quantiles fall back to the members'
 * own and the weights to equal ones.
 */
export function combineTask(
  task: ForecastTask,
  i: number,
  runs: EnsembleRuns,
  combining: Combining,
  names: readonly string[],
  pooling: Pooling = NO_POOLING,
): ForecastOutput {
  const { cuts, ran } = runs;
  const { combination, intervals } = combining;
  const needed = windowsToRun(combining);
  if (!covers(ran, needed))
    throw new Error(
      `a ${combination} combination with ${intervals} quantiles needs ${needed === 'all' ? 'every window' : 'its earliest and last windows'} run`,
    );
  const { able, validated } = seating(runs, i, task.history);
  if (able.length === 0) {
    const reasons = names.map((name, k) => `${name}: ${runs.runs[k].refusal ?? 'no forecast'}`).join('; ');
    throw new ModelInputError(`no ensemble member could forecast series ${task.seriesIndex ?? i} (${reasons})`);
  }
  const windowCount = cuts[i].length;
  const full = (k: number) => runs.runs[k].full[i]!;
  if (validated.length === 0 || windowCount < 2) {
    const outputs = able.map(full);
    const equal = outputs.map(() => 1 / outputs.length);
    const means = outputs.map((o) => o.mean);
    // The members' quantiles sit around their equal-weight mean, whichever centre is returned.
    const meanOfMeans = combine('mean', means, equal);
    return {
      mean: combination === 'median' ? combine('median', means, equal) : meanOfMeans,
      quantiles: ownQuantiles(task, meanOfMeans, outputs, equal),
    };
  }
  const weights = combinedWeights(task, i, runs, combination, validated, pooling.errors);
  const mean = combine(
    combination,
    validated.map((k) => full(k).mean),
    weights,
  );
  const calibration = intervals === 'pooled' ? pooling.calibration : null;
  if (calibration !== null) return { mean, quantiles: pooledQuantiles(task, mean, calibration) };
  if (intervals !== 'conformal') return { mean, quantiles: ownQuantiles(task, mean, validated.map(full), weights) };
  const { history, horizon } = task;
  const actual = cuts[i].map((cut) => history.subarray(cut, cut + horizon));
  const byMember = validated.map((k) => runs.runs[k].windows[i] as Float64Array[]);
  const errors = Array.from({ length: horizon }, () => new Float64Array(windowCount));
  for (let w = 0; w < windowCount; w++) {
    const combined = combine(
      combination,
      byMember.map((m) => m[w]),
      weights,
    );
    for (let j = 0; j < horizon; j++) errors[j][w] = Math.abs(combined[j] - actual[w][j]);
  }
  return { mean, quantiles: conformalQuantiles(mean, errors, task.quantiles) };
}

/**
 * The members' own quantiles around `mean`, at the task's levels: the mixture of their
 * distributions for a series without a season (member-mixture.ts), else their offsets averaged.
 */
function ownQuantiles(task: ForecastTask, mean: Float64Array, outputs: readonly ForecastOutput[], weights: readonly number[]): Float64Array[] {
  return mixesMembers(task) ? mixtureQuantiles(mean, outputs, weights, memberLevels(task), task.quantiles) : memberQuantiles(mean, outputs, weights);
}

/**
 * Combines every task of a group run together: pooled weights and quantiles pool over the group's
 * tasks whose last windows are known at each task's creation time (knownToEach). The weights come
 * first: the known windows are combined with them before they calibrate the quantiles, so a
 * task's intervals follow the mean it gets.
 */
export function combineGroup(tasks: readonly ForecastTask[], runs: EnsembleRuns, combining: Combining, names: readonly string[]): ForecastOutput[] {
  const { combination, intervals } = combining;
  if (combination !== 'pooled' && intervals !== 'pooled') return tasks.map((task, i) => combineTask(task, i, runs, combining, names));
  // What a window brings does not depend on who reads it: its scale and its members' errors, once.
  const pools = poolsOf(tasks, (j) => {
    const last = lastForecasts(runs, j);
    if (last === null) return null;
    const task = tasks[j];
    const scale = recentScale(task.history.subarray(0, last.cut), task.seasonLength, task.horizon);
    if (!(scale > 0)) return null;
    return { cut: last.cut, item: { j, scale, memberErrors: combination === 'pooled' ? scaledMemberErrors(task, last, scale) : [] } };
  });
  const pooling = knownToEach(tasks, pools, (known, calibrates): Pooling => {
    const errors = combination === 'pooled' ? pooledMemberErrors(known.map((item) => item.memberErrors)) : null;
    if (intervals !== 'pooled' || !calibrates) return { errors, calibration: null };
    const windows = known.flatMap(({ j, scale }) => {
      const window = lastWindow(tasks[j], j, runs, combining, errors);
      return window === null ? [] : [{ task: tasks[j], window, scale }];
    });
    return { errors, calibration: poolCalibration(windows) };
  });
  return tasks.map((task, i) => combineTask(task, i, runs, combining, names, pooling(i) ?? NO_POOLING));
}

/**
 * The tasks grouped by the profile each gets: what the settings name, the rest from the task's
 * default profile (defaultProfile; that very object where the settings name nothing). Series of
 * one group run together, so that a global member learns across them.
 */
export function profileGroups(
  tasks: readonly ForecastTask[],
  settings: Pick<EnsembleSettings, 'members' | 'combination' | 'intervals'>,
): { profile: EnsembleProfile; indices: number[] }[] {
  const groups = new Map<string, { profile: EnsembleProfile; indices: number[] }>();
  const named = settings.members !== undefined || settings.combination !== undefined || settings.intervals !== undefined;
  tasks.forEach((task, i) => {
    const fallback = defaultProfile(task);
    const profile: EnsembleProfile = named
      ? {
          members: settings.members ?? fallback.members,
          combination: settings.combination ?? fallback.combination,
          intervals: settings.intervals ?? fallback.intervals,
        }
      : fallback;
    const key = `${profile.members.join(',')}|${profile.combination}|${profile.intervals}`;
    const group = groups.get(key) ?? groups.set(key, { profile, indices: [] }).get(key)!;
    group.indices.push(i);
  });
  return [...groups.values()];
}

/** The ensemble: a global model whose members may run elsewhere (forecastWith's runner) while it combines them. */
export interface EnsembleModel extends GlobalModel {
  forecastWith(tasks: readonly ForecastTask[], context: readonly ContextSeries[], options: GlobalBatchOptions, runner: MemberRunner): Promise<ForecastOutput[]>;
}

export function createEnsemble(load: MemberLoader): EnsembleModel {
  const forecastWith: EnsembleModel['forecastWith'] = async (tasks, context, options, runner) => {
    const settings = (options.options as EnsembleSettings | undefined) ?? { windows: DEFAULT_WINDOWS };
    const outputs: ForecastOutput[] = new Array(tasks.length);
    // Groups are independent: their members run at once too.
    await Promise.all(
      profileGroups(tasks, settings).map(async ({ profile, indices }) => {
        const members = await Promise.all(profile.members.map(async (name) => ({ name, model: await load(name) })));
        const groupTasks = indices.map((i) => tasks[i]);
        const runs = await runMembers(members, groupTasks, context, settings.windows, profile, runner);
        combineGroup(groupTasks, runs, profile, profile.members).forEach((output, j) => (outputs[indices[j]] = output));
      }),
    );
    return outputs;
  };
  return {
    name: 'ensemble',
    forecastWith,
    forecastBatch: (tasks, context, options = {}) => forecastWith(tasks, context, options, runMember),
  };
}
