import type { Combination, EnsembleIntervals, ForecastTask } from '../../contract/model-interface.ts';

/**
 * Long histories with several seasons that mstl can use (hourly data: the day and the week):
 * mstl, which models every one of them, svc-global, seasonal naive and the seasonal window average
 * (the same hour of the week over the last weeks: the week's pattern without one week's noise;
 * docs/decisions/081-seasonal-window-average-member.md), weighted by their window errors, with
 * conformal quantiles, as the long profile. `aets` and `theta` model one season: there
 * they forecast worse than mstl and the weighting gained nothing from them, and ETS's seasonal
 * states are the costliest fit of the ensemble (BENCHMARKS.md, "ensemble on multi-seasonal
 * series"; docs/decisions/079-ensemble-multi-seasonal-profile.md).
 */
export const MULTI_SEASONAL_PROFILE: { readonly members: readonly string[]; readonly combination: Combination; readonly intervals: EnsembleIntervals } = {
  members: ['mstl', 'svc-global', 'seasonal-naive', 'seasonal-window-average'],
  combination: 'weighted',
  intervals: 'conformal',
};

/**
 * Whether more than one of the task's seasonal periods fits twice in its history: the periods
 * mstl keeps (models/families/mstl/mstl-decomposition.ts, usablePeriods; a family does not import
 * another).
 */
export function multiSeasonal(task: ForecastTask): boolean {
  const periods = new Set((task.seasonLengths ?? [task.seasonLength]).map((p) => Math.round(p)));
  return [...periods].filter((p) => p >= 2 && 2 * p < task.history.length).length > 1;
}
