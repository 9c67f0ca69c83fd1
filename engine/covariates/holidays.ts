import Holidays, { type HolidaysTypes } from 'date-holidays';
import { z } from 'zod';
import type { Freq } from '../frequencies.ts';
import { isSubDaily } from '../frequencies.ts';
import { codeOf, type CovariateKind } from './kind.ts';
import { DAY_MS, dayOf, dayRange, daysToSteps, type StepPeriods } from './periods.ts';

/**
 * The `holidays` covariate: public holidays of one country from the `date-holidays` library (types
 * `public` and `bank`: days off for most workers, and bank holidays), on the wall clock of the
 * series' index. A day is a holiday day when a holiday covers any part of it; the smoothing spreads
 * it over its neighbours (`kernel`), and overlapping holidays combine by their maximum, so values
 * stay in [0, 1]. The rules: docs/decisions/041-generated-covariates.md.
 */

/** ISO country codes the holiday library has calendars for. */
const HOLIDAY_COUNTRIES = Object.keys(new Holidays().getCountries()).sort();

const HolidaysConfig = z.strictObject({
  country: codeOf(HOLIDAY_COUNTRIES, 'the ISO code of a country with a holiday calendar'),
  smoothing_method: z.enum(['auto', 'none', 'gaussian', 'exponential', 'ramp', 'flat']).default('auto'),
  window_size: z.int().min(1).max(15).default(15),
  sigma: z.number().gt(0).default(7),
  ramp_days: z.int().min(1).max(35).default(14),
});
type HolidaysConfig = z.output<typeof HolidaysConfig>;

const TYPES: HolidaysTypes.HolidayType[] = ['public', 'bank'];

const calendars = new Map<string, Holidays>();
const intervalsByYear = new Map<string, [number, number][]>();

/** Holiday intervals [start, end) of one year, wall clock as UTC epoch ms. */
function holidayIntervals(country: string, year: number): [number, number][] {
  const key = `${country}:${year}`;
  let out = intervalsByYear.get(key);
  if (!out) {
    let hd = calendars.get(country);
    if (!hd) {
      // With the UTC zone, the library's start and end are the local wall clock read as UTC.
      hd = new Holidays(country, { types: TYPES, timezone: 'UTC' });
      calendars.set(country, hd);
    }
    out = hd
      .getHolidays(year)
      .filter((h) => TYPES.includes(h.type))
      .map((h) => [h.start.getTime(), h.end.getTime()] as [number, number]);
    intervalsByYear.set(key, out);
  }
  return out;
}

/**
 * The smoothing kernel k(d) (d = days from the holiday, k(0) = 1), with half =
 * floor((window_size - 1) / 2) (an even window uses the next smaller odd one):
 * - `none`: 1 on holiday days, 0 elsewhere;
 * - `gaussian`: exp(-d^2 / (2 sigma^2)) for |d| <= half;
 * - `exponential`: exp(-|d| / sigma) for |d| <= half;
 * - `ramp`: 1 - n / ramp_days on the n = 0 .. ramp_days-1 days up to the holiday, 0 after it;
 * - `flat`: 1 for |d| <= half;
 * - `auto`: `none` at every frequency: daily and sub-daily series keep the sharp day (a model
 *   learns the spill-over from its own lags), and weekly and longer steps count holiday days.
 */
function kernel(config: HolidaysConfig): { before: number; after: number; weight: (d: number) => number } {
  const half = Math.floor((config.window_size - 1) / 2);
  switch (config.smoothing_method) {
    case 'auto':
    case 'none':
      return { before: 0, after: 0, weight: () => 1 };
    case 'gaussian':
      return { before: half, after: half, weight: (d) => Math.exp(-(d * d) / (2 * config.sigma * config.sigma)) };
    case 'exponential':
      return { before: half, after: half, weight: (d) => Math.exp(-Math.abs(d) / config.sigma) };
    case 'ramp':
      // d < 0 before the holiday: the effect builds up over ramp_days.
      return { before: config.ramp_days - 1, after: 0, weight: (d) => 1 + d / config.ramp_days };
    case 'flat':
      return { before: half, after: half, weight: () => 1 };
  }
}

/** The column's name: the country, and the smoothing with its parameters when there is one. */
function columnName(c: HolidaysConfig): string {
  const cc = c.country.toUpperCase();
  switch (c.smoothing_method) {
    case 'auto':
    case 'none':
      return `holidays:${cc}`;
    case 'gaussian':
    case 'exponential':
      return `holidays:${cc}:${c.smoothing_method}:w${c.window_size}:s${c.sigma}`;
    case 'ramp':
      return `holidays:${cc}:ramp:${c.ramp_days}`;
    case 'flat':
      return `holidays:${cc}:flat:w${c.window_size}`;
  }
}

export const holidays: CovariateKind<'holidays', typeof HolidaysConfig> = {
  type: 'holidays',
  config: HolidaysConfig,
  resolve(config, { freq }) {
    return { columns: [{ name: columnName(config), kind: 'future', build: (periods) => holidaysColumn(config, periods, freq) }] };
  },
};

/**
 * The column over the steps: a sub-daily step on a holiday day is 1 only inside the holiday's hours
 * (a half-day holiday marks half the day) and takes the smoothed day value elsewhere; a daily step
 * its day's value; a weekly, monthly, quarterly or yearly step the sum over its days.
 */
function holidaysColumn(config: HolidaysConfig, periods: StepPeriods, freq: Freq): Float64Array {
  const country = config.country.toUpperCase();
  const k = kernel(config);
  const [lo, hi] = dayRange(periods);
  const firstDay = lo - k.after * DAY_MS;
  const lastDay = hi + k.before * DAY_MS;
  const days = Math.round((lastDay - firstDay) / DAY_MS) + 1;
  const isHoliday = new Uint8Array(days);
  const intervals: [number, number][] = [];
  for (let y = new Date(firstDay).getUTCFullYear() - 1; y <= new Date(lastDay).getUTCFullYear(); y++) {
    for (const iv of holidayIntervals(country, y)) {
      if (iv[1] <= firstDay || iv[0] >= lastDay + DAY_MS) continue;
      intervals.push(iv);
      for (let d = dayOf(iv[0]); d < iv[1]; d += DAY_MS) {
        const at = (d - firstDay) / DAY_MS;
        if (at >= 0 && at < days) isHoliday[at] = 1;
      }
    }
  }
  const daily = new Float64Array(days);
  isHoliday.forEach((flag, at) => {
    if (!flag) return;
    for (let d = -k.before; d <= k.after; d++) {
      const j = at + d;
      if (j >= 0 && j < days) daily[j] = Math.max(daily[j], k.weight(d));
    }
  });
  const out = daysToSteps(periods, freq, firstDay, daily);
  if (isSubDaily(freq)) {
    for (let i = 0; i < out.length; i++) {
      const t = periods.start[i];
      if (!isHoliday[(dayOf(t) - firstDay) / DAY_MS]) continue;
      out[i] = intervals.some(([s, e]) => t >= s && t < e) ? 1 : 0;
    }
  }
  return out;
}
