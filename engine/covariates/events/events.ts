import { z } from 'zod';
import type { Freq } from '../../frequencies.ts';
import { codeOf, type CovariateKind } from '../kind.ts';
import { DAY_MS, dayRange, daysToSteps, type StepPeriods } from '../periods.ts';
import { loadEventsCalendar, type CalendarEvent } from './calendar.ts';

/**
 * The `events` covariate: one column per event of the shipped calendar (events-calendar.csv in
 * this folder, sources in its README) for a country or `Global`, 1 on the event's days.
 * Sub-daily steps take their day's value; weekly and longer steps count event days. Years a
 * listed-dates event (sport, Prime Day) is not known for are missing (NaN), not 0.
 */

/** The countries of the shipped calendar (`Global` among them). */
const EVENT_COUNTRIES = [...new Set(loadEventsCalendar().map((e) => e.country))].sort();

const EventsConfig = z.strictObject({ country: codeOf(EVENT_COUNTRIES, "a country of the events calendar or 'Global'") });

export const events: CovariateKind<'events', typeof EventsConfig> = {
  type: 'events',
  config: EventsConfig,
  resolve(config, { freq }) {
    // The calendar's own spelling of the code (`Global`, `US`), whichever case the request used.
    const country = EVENT_COUNTRIES.find((c) => c.toLowerCase() === config.country.toLowerCase())!;
    const calendar = loadEventsCalendar().filter((e) => e.country === country);
    return { columns: calendar.map((e) => ({ name: `events:${country}:${e.event}`, kind: 'future', build: (periods) => eventColumn(e, periods, freq) })) };
  },
};

function eventColumn(event: CalendarEvent, periods: StepPeriods, freq: Freq): Float64Array {
  const [lo, hi] = dayRange(periods);
  const days = Math.round((hi - lo) / DAY_MS) + 1;
  const daily = new Float64Array(days);
  const firstYear = new Date(lo).getUTCFullYear();
  const lastYear = new Date(hi).getUTCFullYear();
  for (let y = firstYear; y <= lastYear; y++) {
    if (!event.known(y)) {
      const from = Math.max(lo, Date.UTC(y, 0, 1));
      const to = Math.min(hi, Date.UTC(y, 11, 31));
      for (let d = from; d <= to; d += DAY_MS) daily[(d - lo) / DAY_MS] = NaN;
      continue;
    }
    for (const d of event.daysIn(y)) if (d >= lo && d <= hi) daily[(d - lo) / DAY_MS] = 1;
  }
  return daysToSteps(periods, freq, lo, daily);
}
