import { conformalQuantiles } from './conformal.ts';
import { combine, memberWeights, windowErrors } from './ensemble/combine.ts';
import { runMember, windowCuts, type Member, type MemberModel, type MemberRun } from './ensemble/members.ts';
import {
  ModelInputError,
  type Combination,
  type ContextSeries,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
} from './types.ts';

/**
 * `ensemble`: a combination of statistical models and `svc-global`, weighed and calibrated on each
 * series' own history. Every member forecasts the whole history and `windows` rolling-origin
 * windows inside it (models/ensemble/members.ts); the members' window errors give the weights
 * (models/ensemble/combine.ts), and the combined forecast's window errors give conformal
 * quantiles (models/conformal.ts): the spread is what the combination's own errors were, not an
 * average of the members' quantiles, which ignores that combined errors partly cancel.
 *
 * A member that refuses a task (too short a history) sits that series out; a history too short
 * for two windows gets the members' equal-weight mean and the mean of their quantiles at each
 * level (uncalibrated: there is nothing left to calibrate on).
 */

/** The members and combination a series gets when the request names none. */
export interface EnsembleProfile {
  readonly members: readonly string[];
  readonly combination: Combination;
}

/**
 * Long or strongly seasonal series (M4 Hourly and Weekly, BENCHMARKS.md "ensemble"): the
 * statistical models cheap enough to fit six times on a long history, and svc-global, weighted by
 * their window errors, which there rest on hundreds of points and push weak members (theta on
 * hourly data) down. aarima is left out: its seasonal search costs seconds per long series, six
 * times over; ces made neither set better.
 */
export const LONG_SERIES_PROFILE: EnsembleProfile = {
  members: ['aets', 'theta', 'mstl', 'svc-global', 'seasonal-naive'],
  combination: 'weighted',
};

/**
 * Short series with at most a yearly cycle of 12 (BENCHMARKS.md, "ensemble on short series"):
 * ETS, ARIMA, CES and Theta (the four of the SCUM combination), mstl (a decomposition with an ETS
 * trend: on daily data it models the week) and svc-global, with equal weights. Windows inside a
 * history of a few dozen points train on a fraction of it, so weights learned there are noise
 * more than signal (the forecast combination puzzle): on yearly, quarterly and monthly series
 * built from M4 and on R's quarterly examples the equal mean of these six beat the long profile by
 * 4.8% to 7.5% MASE, and matched it on R's monthly examples and on daily series. aarima is cheap
 * enough here: it is where R's auto.arima itself searches without approximation.
 */
export const SHORT_SERIES_PROFILE: EnsembleProfile = {
  members: ['aets', 'aarima', 'theta', 'ces', 'mstl', 'svc-global'],
  combination: 'mean',
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
  readonly cuts: number[][];
  readonly runs: MemberRun[];
}

/**
 * The ensemble's `aets` estimates as R's `ets()`: measured on the M4 subsets (BENCHMARKS.md),
 * the ensemble is as accurate with it as with statsforecast's estimation (0.772 against 0.784
 * Hourly, 0.357 against 0.358 Weekly) and four times cheaper on weekly data, where R's drops
 * the 52-week season that `mstl` covers anyway.
 */
const asREts = (task: ForecastTask): ForecastTask => ({ ...task, ets: { estimation: 'r' } });

/** Every member's forecasts of every task and window: the part that costs, apart from the combination. */
export async function runMembers(
  members: readonly Member[],
  tasks: readonly ForecastTask[],
  context: readonly ContextSeries[],
  windows: number,
): Promise<EnsembleRuns> {
  const cuts = tasks.map((t) => windowCuts(t.history.length, t.horizon, windows));
  const runs: MemberRun[] = [];
  for (const member of members) runs.push(await runMember(member, member.name === 'aets' ? tasks.map(asREts) : tasks, cuts, context));
  return { cuts, runs };
}

/** The ensemble's forecast of task `i` from its members' runs. */
export function combineTask(task: ForecastTask, i: number, { cuts, runs }: EnsembleRuns, combination: Combination, names: readonly string[]): ForecastOutput {
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
  const weights = memberWeights(combination, windowErrors(byMember, actual));
  const mean = combine(
    combination,
    validated.map((k) => runs[k].full[i]!.mean),
    weights,
  );
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
      const settings = options.ensemble ?? { windows: DEFAULT_WINDOWS };
      // Series that get the same members and combination run together (a global member learns
      // across them); what the request leaves open is chosen per series by its profile.
      const groups = new Map<string, { profile: EnsembleProfile; indices: number[] }>();
      tasks.forEach((task, i) => {
        const fallback = defaultProfile(task);
        const profile = { members: settings.members ?? fallback.members, combination: settings.combination ?? fallback.combination };
        const key = `${profile.members.join(',')}|${profile.combination}`;
        const group = groups.get(key) ?? groups.set(key, { profile, indices: [] }).get(key)!;
        group.indices.push(i);
      });
      const outputs: ForecastOutput[] = new Array(tasks.length);
      for (const { profile, indices } of groups.values()) {
        const members = await Promise.all(profile.members.map(async (name) => ({ name, model: await load(name) })));
        const groupTasks = indices.map((i) => tasks[i]);
        const runs = await runMembers(members, groupTasks, context, settings.windows);
        groupTasks.forEach((task, j) => (outputs[indices[j]] = combineTask(task, j, runs, profile.combination, profile.members)));
      }
      return outputs;
    },
  };
}
