import { z } from 'zod';
import { modelConfig, SeasonLength } from '../../contract/model-config.ts';
import type { EnsembleSettings } from '../../contract/model-interface.ts';
import { COMBINATIONS, ENSEMBLE_INTERVALS } from './combine.ts';
import { MIN_POOLED_SERIES } from './pooled-calibration.ts';
import {
  DEFAULT_WINDOWS,
  LONG_LOW_FREQUENCY_PROFILE,
  LONG_SERIES_PROFILE,
  MULTI_SEASONAL_PROFILE,
  SHORT_SERIES_MAX_LENGTH,
  SHORT_SERIES_MAX_SEASON,
  SHORT_SERIES_PROFILE,
} from './profiles.ts';

/** Models an ensemble may combine: those that need no exported weights. */
export const ENSEMBLE_MEMBERS = ['naive', 'seasonal-naive', 'seasonal-window-average', 'aets', 'aarima', 'theta', 'ces', 'mstl', 'svc-global'] as const;

const shortSeries = `series of at most ${SHORT_SERIES_MAX_LENGTH} observations with a season of at most ${SHORT_SERIES_MAX_SEASON}`;

/** The ensemble's settings (ensemble.ts); left out, they are the measured winners for each series' length. */
export const ensembleConfig = modelConfig(
  z.strictObject({
    season_length: SeasonLength.default(null),
    members: z
      .array(z.enum(ENSEMBLE_MEMBERS))
      .min(2)
      .refine((m) => new Set(m).size === m.length, 'members must be distinct')
      .meta({ uniqueItems: true })
      .optional()
      .meta({
        description: `The models combined: statistical models and svc-global. Left out: ${SHORT_SERIES_PROFILE.members.join(', ')} for ${shortSeries}; ${MULTI_SEASONAL_PROFILE.members.join(', ')} for longer ones with more than one seasonal period that fits twice in the history (hourly data: the day and the week); ${LONG_LOW_FREQUENCY_PROFILE.members.join(', ')} for the other longer ones with a season of at most ${SHORT_SERIES_MAX_SEASON}; ${LONG_SERIES_PROFILE.members.join(', ')} for the other longer or more seasonal ones.`,
      }),
    combination: z
      .enum(COMBINATIONS)
      .optional()
      .meta({
        description: `\`weighted\`: each member weighted by the inverse of its squared mean absolute error in the validation windows of the series' own history; \`pooled\`: the same inverse, of its mean error over the last windows of the request's series of the same season and horizon that ended by the series' own last date, each divided by the naive scale of the window's recent history (equal weights where fewer than ${MIN_POOLED_SERIES} such series have a last window; one period's windows weigh the members too, though they do not size intervals); \`mean\`: equal weights; \`median\`: the members' median at each step. Left out: \`${SHORT_SERIES_PROFILE.combination}\` for ${shortSeries}, \`${LONG_SERIES_PROFILE.combination}\` for the others.`,
      }),
    intervals: z
      .enum(ENSEMBLE_INTERVALS)
      .optional()
      .meta({
        description: `Where the quantiles come from. \`conformal\`: the combined forecast's errors in the validation windows. \`members\`: each member's own quantiles as offsets from its mean, combined with the members' weights around the combined mean; for a series without a season (season length 1), the quantiles of the members' mixture (the weighted mean of their distribution functions), moved onto the combined mean. \`pooled\`: each series' last-window error, divided by the naive scale of the window's recent history (its last two horizons, and at least four seasons), pooled per step across the request's series of the same season and horizon whose last windows ended by the series' own last date (in a backtest, by its creation date: no look-ahead), times the same recent scale of the series' whole history; with fewer than ${MIN_POOLED_SERIES} such series, or when most of them end their last window on the same date (one period's errors, not many), the members' own. Left out: \`${SHORT_SERIES_PROFILE.intervals}\` for ${shortSeries} (their own windows hold too few errors); \`${LONG_LOW_FREQUENCY_PROFILE.intervals}\` for longer ones with a season of at most ${SHORT_SERIES_MAX_SEASON} and one seasonal period (their earliest windows train on much less); \`${LONG_SERIES_PROFILE.intervals}\` for the others.`,
      }),
    conformal_windows: z.int().min(2).max(100).default(DEFAULT_WINDOWS).meta({
      description:
        "Rolling-origin validation windows inside each history: the members' errors there weigh them (a member that refuses a window sits the series out), the combination's give its conformal quantiles. A history too short for two windows (2 x horizon + 1 observations) gets equal weights and the mean of the members' own quantiles.",
    }),
  }),
  (config): EnsembleSettings => ({
    ...(config.members && { members: config.members }),
    ...(config.combination && { combination: config.combination }),
    ...(config.intervals && { intervals: config.intervals }),
    windows: config.conformal_windows,
  }),
);
