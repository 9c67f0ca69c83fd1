/**
 * Short, low-frequency series for the ensemble benchmark, built from the data in `datasets/`:
 * yearly, quarterly and monthly sets of a few dozen to 144 points (the lengths of the yearly,
 * quarterly and monthly series users bring most often), which M4 Hourly and Weekly are not.
 *
 * - `weekly-yearly`, `weekly-quarterly`: each M4 Weekly series (train and test joined) summed over
 *   blocks of 52 or 13 weeks, aligned to its end (a partial first block is dropped), the last 47
 *   or 72 blocks kept; horizon 6 (season 1) and 8 (season 4).
 * - `weekly-monthly`: the mean of the weeks starting in each calendar month of the files'
 *   synthetic weekly index (every series starts on 1990-01-01, datasets/README.md), the first and
 *   last month dropped as partial, the last 144 months kept; horizon 18, season 12. The mean, not
 *   the sum, so that four- and five-week months compare.
 * - `weekly-monthly-long`: the same months, the last 300 kept, only series with more than 150 months
 *   of history: not short, but of the lengths many monthly series have (the ensemble's long
 *   profile, with a season of at most 12).
 * - `hourly-daily`: each M4 Hourly series summed over days (24 hours, aligned to its end): 31 to
 *   42 days; horizon 14, season 7.
 * - `r-monthly`, `r-quarterly`: R's monthly and quarterly example series and seeded SARIMA
 *   simulations (`datasets/r-seasonal.csv.gz`), the last 18 or 8 points held out.
 * - `yearly-panels`: yearly series as published (national accounts, population, prices;
 *   `datasets/yearly-panels.csv.gz`), 20 to 40 years each, the last 6 held out.
 * - `monthly-panels`: monthly series as published, with their months (US employment by industry,
 *   ending in many different years, and eight of fpp2's and fpp3's examples;
 *   `datasets/monthly-panels.csv.gz`), 48 to 144 months of history, the next 18 held out.
 * - `monthly-panels-long`: the same US industries with 156 to 282 months of history, the next 18
 *   held out (`datasets/monthly-panels-long.csv.gz`): real monthly series for the long profile.
 * - `quarterly-panels`: quarterly series as published, with their quarters (Australian prisoners,
 *   tourism and hotels, US quarterly changes, fpp2's examples; `datasets/quarterly-panels.csv.gz`),
 *   40 to 72 quarters of history, the next 8 held out.
 *
 * A series whose training part would be shorter than 12 years, 16 quarters, 30 months or 14 days
 * is left out. The horizons are the M competitions' for those frequencies.
 */
import { loadM4, type M4Series } from '../../../datasets/m4.ts';
import { loadCalendarPanels, monthsLater, MONTHLY_PANELS_LONG_PATH, MONTHLY_PANELS_PATH, QUARTERLY_PANELS_PATH } from '../../../datasets/calendar-panels.ts';
import { loadRSeasonal } from '../../../datasets/r-seasonal.ts';
import { loadYearlyPanels } from '../../../datasets/yearly-panels.ts';

export const SHORT_SETS = [
  'weekly-yearly',
  'yearly-panels',
  'weekly-quarterly',
  'quarterly-panels',
  'weekly-monthly',
  'monthly-panels',
  'hourly-daily',
  'r-monthly',
  'r-quarterly',
  'weekly-monthly-long',
  'monthly-panels-long',
] as const;
export type ShortSet = (typeof SHORT_SETS)[number];

/** The shortest training part a set keeps: 12 years, 16 quarters, 30 months or 14 days (R's sets: any). */
export const MIN_TRAIN: Readonly<Record<ShortSet, number>> = {
  'weekly-yearly': 12,
  'yearly-panels': 12,
  'weekly-quarterly': 16,
  'quarterly-panels': 16,
  'weekly-monthly': 30,
  'monthly-panels': 30,
  'hourly-daily': 14,
  'r-monthly': 1,
  'r-quarterly': 1,
  'weekly-monthly-long': 151,
  'monthly-panels-long': 151,
};

/** A short set's series; `start` is its first month (UTC milliseconds) where the data know it. */
export type ShortSeries = M4Series & { readonly start?: number };

const DAY_MS = 86_400_000;

function split(id: string, values: ArrayLike<number>, seasonLength: number, horizon: number, keep: number, minTrain: number): M4Series | null {
  const kept = Float64Array.from(values).slice(-keep);
  if (kept.length - horizon < minTrain) return null;
  return { id, seasonLength, horizon, train: kept.slice(0, kept.length - horizon), test: kept.slice(kept.length - horizon) };
}

/** Sums over consecutive blocks of `block` values, aligned to the end. */
function blockSums(values: Float64Array, block: number): Float64Array {
  const count = Math.floor(values.length / block);
  const offset = values.length - count * block;
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) for (let k = 0; k < block; k++) out[i] += values[offset + i * block + k];
  return out;
}

/** Means of the weeks starting in each calendar month (weeks from 1990-01-01), first and last month dropped. */
function monthMeans(values: Float64Array): Float64Array {
  const sums: number[] = [];
  const counts: number[] = [];
  let month = -1;
  values.forEach((v, k) => {
    const d = new Date(Date.UTC(1990, 0, 1) + 7 * k * DAY_MS);
    const m = d.getUTCFullYear() * 12 + d.getUTCMonth();
    if (m !== month) {
      sums.push(0);
      counts.push(0);
      month = m;
    }
    sums[sums.length - 1] += v;
    counts[counts.length - 1]++;
  });
  return Float64Array.from(sums.slice(1, -1), (s, i) => s / counts[i + 1]);
}

/** A series' history and holdout as one array. */
export const joined = (s: M4Series) => Float64Array.from([...s.train, ...s.test]);
const present = (s: M4Series | null): s is M4Series => s !== null;

/** The calendar panels' files, seasons and horizons. */
const PANEL_FILES = {
  'monthly-panels': [MONTHLY_PANELS_PATH, 12, 18],
  'monthly-panels-long': [MONTHLY_PANELS_LONG_PATH, 12, 18],
  'quarterly-panels': [QUARTERLY_PANELS_PATH, 4, 8],
} as const;

export async function loadShortSet(name: ShortSet): Promise<ShortSeries[]> {
  switch (name) {
    case 'weekly-yearly':
      return (await loadM4('weekly')).map((s) => split(`${s.id}-Y`, blockSums(joined(s), 52), 1, 6, 47, MIN_TRAIN[name])).filter(present);
    case 'weekly-quarterly':
      return (await loadM4('weekly')).map((s) => split(`${s.id}-Q`, blockSums(joined(s), 13), 4, 8, 72, MIN_TRAIN[name])).filter(present);
    case 'weekly-monthly':
      return (await loadM4('weekly')).map((s) => split(`${s.id}-M`, monthMeans(joined(s)), 12, 18, 144, MIN_TRAIN[name])).filter(present);
    case 'weekly-monthly-long':
      return (await loadM4('weekly')).map((s) => split(`${s.id}-ML`, monthMeans(joined(s)), 12, 18, 300, MIN_TRAIN[name])).filter(present);
    case 'hourly-daily':
      return (await loadM4('hourly')).map((s) => split(`${s.id}-D`, blockSums(joined(s), 24), 7, 14, 60, MIN_TRAIN[name])).filter(present);
    case 'monthly-panels':
    case 'monthly-panels-long':
    case 'quarterly-panels': {
      const [path, season, horizon] = PANEL_FILES[name];
      return loadCalendarPanels(path, 12 / season).flatMap((s) => {
        const kept = split(s.id, s.y, season, horizon, s.y.length, MIN_TRAIN[name]);
        return kept ? [{ ...kept, start: s.start }] : [];
      });
    }
    case 'yearly-panels':
      return loadYearlyPanels()
        .map((s) => split(s.id, s.y, 1, 6, s.y.length, MIN_TRAIN[name]))
        .filter(present);
    case 'r-monthly':
    case 'r-quarterly': {
      const freq = name === 'r-monthly' ? 12 : 4;
      return loadRSeasonal()
        .filter((s) => s.freq === freq)
        .map((s) => split(s.id, s.y, freq, freq === 12 ? 18 : 8, s.y.length, MIN_TRAIN[name]))
        .filter(present);
    }
  }
}

/** Steps of each set's calendar: months for the yearly, quarterly and monthly sets, days for the daily one. */
const STEP: Record<ShortSet, { months: number } | { days: number }> = {
  'weekly-yearly': { months: 12 },
  'yearly-panels': { months: 12 },
  'weekly-quarterly': { months: 3 },
  'weekly-monthly': { months: 1 },
  'monthly-panels': { months: 1 },
  'quarterly-panels': { months: 3 },
  'hourly-daily': { days: 1 },
  'r-monthly': { months: 1 },
  'r-quarterly': { months: 3 },
  'weekly-monthly-long': { months: 1 },
  'monthly-panels-long': { months: 1 },
};

/**
 * Steps in a year of the sets built from M4 whose series are shifted back by whole years (see
 * shortSetTimes). Not `hourly-daily`: its histories hold one window, so it never pools, and
 * shifted days would give svc-global day-of-month features that mean nothing without dates.
 */
const STEPS_PER_YEAR: Partial<Record<ShortSet, number>> = { 'weekly-yearly': 1, 'weekly-quarterly': 4, 'weekly-monthly': 12, 'weekly-monthly-long': 12 };

/** Whether the set's series end in different years by their position alone (STEPS_PER_YEAR). */
export const staggersEnds = (name: ShortSet) => STEPS_PER_YEAR[name] !== undefined;

/**
 * A regular calendar index of `length` steps of the set's frequency, so that a global model sees
 * the calendar features a request of that frequency carries (none for yearly steps, the month for
 * monthly ones). The history's last step is on 2020-01-01, or, for the `index`-th series of a
 * yearly, quarterly or monthly set built from M4, `index mod 12` years before it: M4's
 * series come from different periods (its files keep no dates), so a request of them is not one
 * period's panel, which the ensemble's pooled quantiles tell apart. Whole years keep every step's
 * month. A series that knows its first month (`start`) keeps its own calendar. The other sets'
 * series all end on 2020-01-01.
 */
export function shortSetTimes(name: ShortSet, historyLength: number, length: number, index = 0, start?: number): Float64Array {
  const step = STEP[name];
  if (start !== undefined && 'months' in step) return Float64Array.from({ length }, (_, k) => monthsLater(start, k * step.months));
  const offset = (index % 12) * (STEPS_PER_YEAR[name] ?? 0);
  return Float64Array.from({ length }, (_, k) => {
    const back = historyLength - 1 - k + offset;
    return 'months' in step ? Date.UTC(2020, -back * step.months, 1) : Date.UTC(2020, 0, 1 - back * step.days);
  });
}
