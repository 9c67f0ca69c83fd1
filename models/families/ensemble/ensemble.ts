import { conformalQuantiles } from '../../numerics/conformal.ts';
import { combine, memberQuantiles, memberWeights, windowErrors } from './combine.ts';
import { runMember, windowCuts, type Member, type MemberModel, type MemberRun } from './members.ts';
import {
  ModelInputError,
  type Combination,
  type ContextSeries,
  type EnsembleIntervals,
  type EnsembleSettings,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
} from '../../contract/model-interface.ts';

/**
 * `ensemble`: a combination of statistical models and `svc-global`, weighed and calibrated on each
 * series' own history. Every member forecasts the whole history and `windows` rolling-origin
 * windows inside it (models/families/ensemble/members.ts; only the earliest where no window's forecast is
 * read, seatsOnly); the members' window errors give the weights (models/families/ensemble/combine.ts).
 * Quantiles come from one of two places, by the series' profile unless the request names one:
 * the combined forecast's window errors (conformal quantiles, models/numerics/conformal.ts: the spread is
 * what the combination's own errors were, which partly cancel across members), or the members'
 * own quantiles around the combined mean. On long histories the windows hold hundreds of points
 * and conformal quantiles cover as they should; on short ones the windows train on a fraction of
 * an already short history, their errors run larger than the last forecast's (or smaller, where
 * the level grows), and the members' own quantiles score better (BENCHMARKS.md, "ensemble on
 * short series").
 *
 * A member that refuses a task (too short a history) sits that series out; a history too short
 * for two windows gets the members' equal-weight mean and the mean of their quantiles at each
 * level (uncalibrated: there is nothing left to calibrate on).
 */

/** The members, combination and quantiles a series gets when the request names none. */
export interface EnsembleProfile {
  readonly members: readonly string[];
  readonly combination: Combination;
  readonly intervals: EnsembleIntervals;
}

/** How a task's member forecasts become one: the combination of the means and where the quantiles come from. */
export type Combining = Pick<EnsembleProfile, 'combination' | 'intervals'>;

/**
 * Long or strongly seasonal series (M4 Hourly and Weekly, BENCHMARKS.md "ensemble"): the
 * statistical models cheap enough to fit six times on a long history, and svc-global, weighted by
 * their window errors, which there rest on hundreds of points and push weak members (theta on
 * hourly data) down. aarima is left out: its seasonal search is slow on long series, six times
 * over; ces made neither set better. Conformal quantiles from the windows cover as they should
 * there (docs/decisions/004-ensemble-profile-per-series.md).
 */
export const LONG_SERIES_PROFILE: EnsembleProfile = {
  members: ['aets', 'theta', 'mstl', 'svc-global', 'seasonal-naive'],
  combination: 'weighted',
  intervals: 'conformal',
};

/**
 * Short series with at most a yearly cycle of 12 (BENCHMARKS.md, "ensemble on short series"):
 * ETS, ARIMA, CES and Theta (the four of the SCUM combination), mstl (a decomposition with an ETS
 * trend: on daily data it models the week) and svc-global, with equal weights. Windows inside a
 * history of a few dozen points train on a fraction of it, so weights learned there are noise
 * more than signal (the forecast combination puzzle), and the equal mean of these six forecast
 * short series better than the long profile. aarima is cheap enough here: it is where R's
 * auto.arima itself searches without approximation. Quantiles: the members' own, averaged around
 * the mean, which scored better than conformal ones from the same windows
 * (docs/decisions/004-ensemble-profile-per-series.md, 005-ensemble-windows-and-quantiles.md).
 */
export const SHORT_SERIES_PROFILE: EnsembleProfile = {
  members: ['aets', 'aarima', 'theta', 'ces', 'mstl', 'svc-global'],
  combination: 'mean',
  intervals: 'members',
};

/** Rolling-origin windows per history when the request names no number. */
export const DEFAULT_WINDOWS = 5;

/** R's auto.arima boundary for an exact search (n <= 150 and m <= 12): where a history counts as short. */
export const SHORT_SERIES_MAX_LENGTH = 150;
export const SHORT_SERIES_MAX_SEASON = 12;

/** The profile a series gets by default: short (at most 150 observations, season at most 12) or long. */
export function defaultProfile(task: ForecastTask): EnsembleProfile {
  return task.history.length <= SHORT_SERIES_MAX_LENGTH && task.seasonLength <= SHORT_SERIES_MAX_SEASON ? SHORT_SERIES_PROFILE : LONG_SERIES_PROFILE;
}

/** Loads a member by model name (the registry's loaders, so that this module does not import the registry). */
export type MemberLoader = (name: string) => Promise<MemberModel>;

export interface EnsembleRuns {
  /** Every task's window cuts, oldest first. */
  readonly cuts: number[][];
  readonly runs: MemberRun[];
  /** Only each task's earliest window was run (`seatsOnly`): its runs seat the members and hold no other window. */
  readonly earliestOnly?: boolean;
}

/**
 * Whether a combination reads the members' window forecasts: for the weights, or for conformal
 * scores. The equal mean or median with the members' own quantiles reads only which members could
 * forecast the windows, and a member that can forecast the earliest (shortest) window can
 * forecast the later ones: on the short sets of BENCHMARKS.md seating members by the earliest
 * window and by all of them agreed on every series. Such a combination runs one window per task
 * instead of all.
 */
export function seatsOnly({ combination, intervals }: Combining): boolean {
  return combination !== 'weighted' && intervals === 'members';
}

/**
 * The ensemble's `aets` estimates as R's `ets()`: the ensemble is as accurate with it as with
 * statsforecast's estimation, and much cheaper on weekly data, where R's drops the 52-week season
 * that `mstl` covers anyway (docs/decisions/008-aets-estimates-as-statsforecast.md).
 */
const asREts = (task: ForecastTask): ForecastTask => ({ ...task, options: { estimation: 'r' } });

/**
 * Every member's forecasts of every task and window: the part that costs, apart from the
 * combination. With `earliestOnly` (see seatsOnly), each task's earliest window only, where it
 * has two or more (with fewer none is read).
 */
export async function runMembers(
  members: readonly Member[],
  tasks: readonly ForecastTask[],
  context: readonly ContextSeries[],
  windows: number,
  earliestOnly = false,
): Promise<EnsembleRuns> {
  const cuts = tasks.map((t) => windowCuts(t.history.length, t.horizon, windows));
  const run = earliestOnly ? cuts.map((c) => (c.length >= 2 ? c.slice(0, 1) : [])) : cuts;
  const runs: MemberRun[] = [];
  for (const member of members) runs.push(await runMember(member, member.name === 'aets' ? tasks.map(asREts) : tasks, run, context));
  return { cuts, runs, earliestOnly };
}

/** The ensemble's forecast of task `i` from its members' runs. */
export function combineTask(
  task: ForecastTask,
  i: number,
  { cuts, runs, earliestOnly }: EnsembleRuns,
  combining: Combining,
  names: readonly string[],
): ForecastOutput {
  const { combination, intervals } = combining;
  if (earliestOnly && !seatsOnly(combining)) throw new Error(`a ${combination} combination with ${intervals} quantiles needs every window run`);
  const able = runs.map((_, k) => k).filter((k) => runs[k].full[i] !== null);
  if (able.length === 0) {
    const reasons = names.map((name, k) => `${name}: ${runs[k].refusal ?? 'no forecast'}`).join('; ');
    throw new ModelInputError(`no ensemble member could forecast series ${task.seriesIndex ?? i} (${reasons})`);
  }
  const validated = able.filter((k) => runs[k].windows[i].every((w) => w !== null));
  const windowCount = cuts[i].length;
  if (validated.length === 0 || windowCount < 2) {
    const outputs = able.map((k) => runs[k].full[i]!);
    const equal = outputs.map(() => 1 / outputs.length);
    return {
      mean: combine(
        combination === 'median' ? 'median' : 'mean',
        outputs.map((o) => o.mean),
        equal,
      ),
      quantiles: task.quantiles.map((_, q) =>
        combine(
          'mean',
          outputs.map((o) => o.quantiles[q]),
          equal,
        ),
      ),
    };
  }
  const { history, horizon } = task;
  const actual = cuts[i].map((cut) => history.subarray(cut, cut + horizon));
  const byMember = validated.map((k) => runs[k].windows[i] as Float64Array[]);
  const weights = combination === 'weighted' ? memberWeights(combination, windowErrors(byMember, actual)) : validated.map(() => 1 / validated.length);
  const mean = combine(
    combination,
    validated.map((k) => runs[k].full[i]!.mean),
    weights,
  );
  if (intervals === 'members')
    return {
      mean,
      quantiles: memberQuantiles(
        mean,
        validated.map((k) => runs[k].full[i]!),
        weights,
      ),
    };
  const scores = Array.from({ length: horizon }, () => new Float64Array(windowCount));
  for (let w = 0; w < windowCount; w++) {
    const combined = combine(
      combination,
      byMember.map((m) => m[w]),
      weights,
    );
    for (let j = 0; j < horizon; j++) scores[j][w] = Math.abs(combined[j] - actual[w][j]);
  }
  return { mean, quantiles: conformalQuantiles(mean, scores, task.quantiles) };
}

export function createEnsemble(load: MemberLoader): GlobalModel {
  return {
    name: 'ensemble',
    async forecastBatch(tasks: readonly ForecastTask[], context: readonly ContextSeries[], options: GlobalBatchOptions = {}): Promise<ForecastOutput[]> {
      const settings = (options.options as EnsembleSettings | undefined) ?? { windows: DEFAULT_WINDOWS };
      // Series that get the same members and combination run together (a global member learns
      // across them); what the request leaves open is chosen per series by its profile.
      const groups = new Map<string, { profile: EnsembleProfile; indices: number[] }>();
      tasks.forEach((task, i) => {
        const fallback = defaultProfile(task);
        const profile: EnsembleProfile = {
          members: settings.members ?? fallback.members,
          combination: settings.combination ?? fallback.combination,
          intervals: settings.intervals ?? fallback.intervals,
        };
        const key = `${profile.members.join(',')}|${profile.combination}|${profile.intervals}`;
        const group = groups.get(key) ?? groups.set(key, { profile, indices: [] }).get(key)!;
        group.indices.push(i);
      });
      const outputs: ForecastOutput[] = new Array(tasks.length);
      for (const { profile, indices } of groups.values()) {
        const members = await Promise.all(profile.members.map(async (name) => ({ name, model: await load(name) })));
        const groupTasks = indices.map((i) => tasks[i]);
        const runs = await runMembers(members, groupTasks, context, settings.windows, seatsOnly(profile));
        groupTasks.forEach((task, j) => (outputs[indices[j]] = combineTask(task, j, runs, profile, profile.members)));
      }
      return outputs;
    },
  };
}
