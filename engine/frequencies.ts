/** The twelve frequencies of the API reference's machine-readable list (section 2.1). */
export const FREQUENCIES = ['10S', 'min', '5min', '10min', '15min', '30min', 'H', 'D', 'W', 'M', 'Q', 'Y'] as const;
export type Freq = (typeof FREQUENCIES)[number];

/** A step of the index grid: a fixed duration, or a number of calendar months. */
export type Step = { kind: 'fixed'; ms: number } | { kind: 'months'; months: number } | { kind: 'days'; days: number };

const MINUTE = 60_000;

export const STEP: Record<Freq, Step> = {
  '10S': { kind: 'fixed', ms: 10_000 },
  min: { kind: 'fixed', ms: MINUTE },
  '5min': { kind: 'fixed', ms: 5 * MINUTE },
  '10min': { kind: 'fixed', ms: 10 * MINUTE },
  '15min': { kind: 'fixed', ms: 15 * MINUTE },
  '30min': { kind: 'fixed', ms: 30 * MINUTE },
  H: { kind: 'fixed', ms: 60 * MINUTE },
  // Days and weeks are calendar days, so a date-only index never drifts by an hour.
  D: { kind: 'days', days: 1 },
  W: { kind: 'days', days: 7 },
  M: { kind: 'months', months: 1 },
  Q: { kind: 'months', months: 3 },
  Y: { kind: 'months', months: 12 },
};

/**
 * Default seasonal period per frequency, used when model_config gives no season_length.
 * The dominant cycle a forecaster expects: the day for sub-hourly data up to 5 minutes
 * (288 steps), the hour for finer grids (a day would be thousands of steps), the week for
 * daily data, the year for weekly, monthly and quarterly data.
 */
export const DEFAULT_SEASON_LENGTH: Record<Freq, number> = {
  '10S': 360,
  min: 60,
  '5min': 288,
  '10min': 144,
  '15min': 96,
  '30min': 48,
  H: 24,
  D: 7,
  W: 52,
  M: 12,
  Q: 4,
  Y: 1,
};

export const isSubDaily = (freq: Freq): boolean => STEP[freq].kind === 'fixed';

/**
 * Every natural cycle per frequency, shortest first (the first is DEFAULT_SEASON_LENGTH): what a
 * model of several seasonalities (mstl) is given when model_config names none. Sub-daily grids
 * have the day and the week (the hour and the day below 5 minutes), daily data the week and the
 * year.
 */
export const SEASONAL_CYCLES: Record<Freq, readonly number[]> = {
  '10S': [360, 8640],
  min: [60, 1440],
  '5min': [288, 2016],
  '10min': [144, 1008],
  '15min': [96, 672],
  '30min': [48, 336],
  H: [24, 168],
  D: [7, 365],
  W: [52],
  M: [12],
  Q: [4],
  Y: [1],
};
