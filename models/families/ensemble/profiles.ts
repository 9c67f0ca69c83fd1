/**
 * The ensemble's defaults: which members, combination and quantiles a series gets by its length
 * and seasons when the request names none, and how many validation windows it reads. Each profile
 * is the measured winner for its kind of series (BENCHMARKS.md;
 * docs/decisions/004-ensemble-profile-per-series.md).
 */
import type { Combination, EnsembleIntervals, ForecastTask } from '../../contract/model-interface.ts';
import { multiSeasonal } from './multi-seasonal.ts';

/** The members, combination and quantiles a series gets when the request names none. */
export interface EnsembleProfile {
  readonly members: readonly string[];
  readonly combination: Combination;
  readonly intervals: EnsembleIntervals;
}

/** How a task's member forecasts become one: the combination of the means and where the quantiles come from. */
export type Combining = Pick<EnsembleProfile, 'combination' | 'intervals'>;

/**
 * Long or strongly seasonal series of one season (M4 Weekly, BENCHMARKS.md "ensemble"): the
 * statistical models cheap enough to fit on a long history (each fits twice: its windows carry
 * the earliest one's fit, runMembers), and svc-global, weighted by their window errors, which
 * there rest on hundreds of points and push weak members down. aarima is left out: its seasonal
 * search is slow on long series, and it keeps no fit, so it would search six times; ces made
 * neither set better. Conformal quantiles from the windows cover as they should there
 * (docs/decisions/004-ensemble-profile-per-series.md). Histories with several seasons (hourly
 * data) get MULTI_SEASONAL_PROFILE.
 */
export const LONG_SERIES_PROFILE: EnsembleProfile = {
  members: ['aets', 'theta', 'mstl', 'svc-global', 'seasonal-naive'],
  combination: 'weighted',
  intervals: 'conformal',
};

/**
 * Long histories with several seasons that mstl can use (multiSeasonal; hourly data: the day and
 * the week): mstl, which models every one of them, svc-global, seasonal naive and the seasonal
 * window average (the same hour of the week over the last weeks: the week's pattern without one
 * week's noise; docs/decisions/081-seasonal-window-average-member.md), weighted by their window
 * errors, with conformal quantiles, as the long profile. `aets` and `theta` model one season:
 * there they forecast worse than mstl and the weighting gained nothing from them, and ETS's
 * seasonal states are the costliest fit of the ensemble (BENCHMARKS.md, "ensemble on
 * multi-seasonal series"; docs/decisions/079-ensemble-multi-seasonal-profile.md).
 */
export const MULTI_SEASONAL_PROFILE: EnsembleProfile = {
  members: ['mstl', 'svc-global', 'seasonal-naive', 'seasonal-window-average'],
  combination: 'weighted',
  intervals: 'conformal',
};

/**
 * Longer series with at most a yearly cycle of 12 (monthly, past 150 points): the long profile
 * without seasonal-naive, its quantiles pooled as short series' are. On monthly histories of 13 to
 * 24 years the weights still gave seasonal-naive a share, and both longer monthly sets forecast
 * better without it (docs/decisions/093-longer-monthly-series-drop-seasonal-naive.md). Its own
 * earliest window trains on five horizons less and errs more than the forecast: conformal
 * quantiles over-cover (docs/decisions/092-longer-low-frequency-series-pool-their-quantiles.md).
 */
export const LONG_LOW_FREQUENCY_PROFILE: EnsembleProfile = {
  members: ['aets', 'theta', 'mstl', 'svc-global'],
  combination: 'weighted',
  intervals: 'pooled',
};

/**
 * Short series with at most a yearly cycle of 12 (BENCHMARKS.md, "ensemble on short series"):
 * ETS, ARIMA, CES and Theta (the four of the SCUM combination), mstl (a decomposition with an ETS
 * trend: on daily data it models the week) and svc-global. Windows inside a history of a few
 * dozen points train on a fraction of it, so weights learned there are noise more than signal
 * (the forecast combination puzzle), and the equal mean of these six forecast short series
 * better than the long profile. Where the request holds many series, their last windows weigh
 * the members for all of them (pooled-weights.ts; one period's too); elsewhere the weights are
 * equal. Quantiles: pooled across those series where they are of different periods, else the
 * members' own, averaged around the mean (mixed where the series has no season)
 * (docs/decisions/004-ensemble-profile-per-series.md, 005-ensemble-windows-and-quantiles.md,
 * 058-pooled-calibration-of-short-series.md, 089-ensemble-weights-pooled-across-series.md,
 * 094-one-periods-pools-weigh-the-members.md).
 */
export const SHORT_SERIES_PROFILE: EnsembleProfile = {
  members: ['aets', 'aarima', 'theta', 'ces', 'mstl', 'svc-global'],
  combination: 'pooled',
  intervals: 'pooled',
};

/** Rolling-origin windows per history when the request names no number. */
export const DEFAULT_WINDOWS = 5;

/** R's auto.arima boundary for an exact search (n <= 150 and m <= 12): where a history counts as short. */
export const SHORT_SERIES_MAX_LENGTH = 150;
export const SHORT_SERIES_MAX_SEASON = 12;

/** The default profile: short (n <= 150, season <= 12), long with several seasons, long with a season <= 12, or long. */
export function defaultProfile(task: ForecastTask): EnsembleProfile {
  const lowFrequency = task.seasonLength <= SHORT_SERIES_MAX_SEASON;
  if (task.history.length <= SHORT_SERIES_MAX_LENGTH && lowFrequency) return SHORT_SERIES_PROFILE;
  if (multiSeasonal(task)) return MULTI_SEASONAL_PROFILE;
  return lowFrequency ? LONG_LOW_FREQUENCY_PROFILE : LONG_SERIES_PROFILE;
}
