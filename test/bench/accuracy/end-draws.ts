/**
 * The sets built from M4 Weekly keep no dates. The benchmark ends each series 0 to 11 years back
 * by its position (shortSetTimes), so that a request of them is not one period's panel. Which
 * series end when decides which windows each series' pool knows
 * (docs/decisions/090-pools-read-only-known-windows.md): one assignment is one draw among many
 * equally arbitrary ones. This scores the default's quantiles over seeded random assignments,
 * each keeping how many series end in each year.
 *
 * The members run once, on the benchmark's own times; only the times the pools read are drawn
 * again. `svc-global` chooses its cutoffs from the times it is given, so its forecasts stay
 * those of the benchmark's assignment.
 */
import type { M4Series } from '../../../datasets/m4.ts';
import { rng } from '../../../models/numerics/random.ts';
import { combineGroup, profileGroups, runMembers, type EnsembleRuns } from '../../../models/families/ensemble/ensemble.ts';
import type { EnsembleProfile } from '../../../models/families/ensemble/profiles.ts';
import type { ForecastOutput, ForecastTask } from '../../../models/contract/model-interface.ts';
import { loadMember } from '../../../models/contract/model-registry.ts';
import { BENCH_MODEL_SETTINGS } from './runs.ts';
import { mean, score } from './scoring.ts';
import { shortSetTimes, type ShortSet } from './short-sets.ts';

/** Each draw's mean 80% cover and scaled CRPS over the set's series. */
export interface EndDraws {
  readonly cover: number[];
  readonly scaledCrps: number[];
}

/** Series of one profile and their members' runs. */
export interface ProfileRuns {
  readonly profile: EnsembleProfile;
  readonly indices: readonly number[];
  readonly runs: EnsembleRuns;
}

/** Every task's forecast, each profile's group combined as the service combines it (combineGroup). */
export function combineByProfile(tasks: readonly ForecastTask[], groups: readonly ProfileRuns[]): ForecastOutput[] {
  const outputs: ForecastOutput[] = new Array(tasks.length);
  for (const { profile, indices, runs } of groups)
    combineGroup(
      indices.map((i) => tasks[i]),
      runs,
      profile,
      profile.members,
    ).forEach((output, k) => (outputs[indices[k]] = output));
  return outputs;
}

/** A random order of 0..n-1 (Fisher-Yates): the positions whose end years the series take. */
function permutation(n: number, uniform: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(uniform() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The default's cover and scaled CRPS over `draws` random assignments of end years to `series`, each group of series run with its profile. */
export async function endYearDraws(
  name: ShortSet,
  series: readonly M4Series[],
  tasks: readonly ForecastTask[],
  windows: number,
  draws: number,
  seed = 1,
): Promise<EndDraws> {
  const groups = await Promise.all(
    profileGroups(tasks, {}).map(async ({ profile, indices }) => {
      const members = await Promise.all(profile.members.map(async (m) => ({ name: m, model: await loadMember(m, BENCH_MODEL_SETTINGS) })));
      const runs = await runMembers(
        members,
        indices.map((i) => tasks[i]),
        [],
        windows,
        profile,
      );
      return { profile, indices, runs };
    }),
  );
  const uniform = rng(seed);
  const result: EndDraws = { cover: [], scaledCrps: [] };
  for (let d = 0; d < draws; d++) {
    const order = permutation(tasks.length, uniform);
    const drawn = tasks.map((task, i) => ({ ...task, times: shortSetTimes(name, task.history.length, task.history.length + task.horizon, order[i]) }));
    const scores = combineByProfile(drawn, groups).map((output, i) => score(series[i], output));
    const scaled = scores.map((s) => s.scaledCrps).filter((c): c is number => c !== null);
    result.cover.push(mean(scores.map((s) => s.coverage80)));
    result.scaledCrps.push(mean(scaled));
  }
  return result;
}
