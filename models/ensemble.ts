import { conformalQuantiles } from './conformal.ts';
import { combine, memberWeights, windowErrors } from './ensemble/combine.ts';
import { runMember, windowCuts, type Member, type MemberModel, type MemberRun } from './ensemble/members.ts';
import {
  ModelInputError,
  type Combination,
  type EnsembleSettings,
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

/**
 * Measured on M4 Hourly and Weekly (BENCHMARKS.md, "ensemble"): the statistical models cheap
 * enough to fit six times per series, and svc-global. aarima is left out: its seasonal search
 * costs seconds per long series, six times over; ces made neither set better.
 */
export const DEFAULT_ENSEMBLE: EnsembleSettings = {
  members: ['aets', 'theta', 'mstl', 'svc-global', 'seasonal-naive'],
  combination: 'weighted',
  windows: 5,
};

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
      const settings = options.ensemble ?? DEFAULT_ENSEMBLE;
      const members = await Promise.all(settings.members.map(async (name) => ({ name, model: await load(name) })));
      const runs = await runMembers(members, tasks, context, settings.windows);
      return tasks.map((task, i) => combineTask(task, i, runs, settings.combination, settings.members));
    },
  };
}
