import { z } from 'zod';
import type { Freq } from '../../frequencies.ts';
import { listed, type CovariateKind } from '../kind.ts';
import { DAY_MS, dayRange, daysToSteps, type StepPeriods } from '../periods.ts';
import { loadEventsCalendar, type CalendarEvent } from './calendar.ts';

/**
 * The `events` covariate: one column per event of the shipped calendar (events-calendar.csv in
 * this folder, sources in its README) for a country or `Global`, 1 on the event's days.
 * Sub-daily steps take their day's value; weekly and longer steps count event days. Years a
 * listed-dates event (sport, Prime Day) is not known for are missing (NaN), not 0.
 */

const EventsConfig = z.strictObject({ country: z.union([z.string().length(2), z.literal('Global')]) });

function eventCountries(): string[] {
  return [...new Set(loadEventsCalendar().map((e) => e.country))].sort();
}

export const events: CovariateKind<'events', typeof EventsConfig> = {
  type: 'events',
  config: EventsConfig,
  resolve(config, { freq }) {
    const country = config.country === 'Global' ? 'Global' : config.country.toUpperCase();
    const calendar = loadEventsCalendar().filter((e) => e.country === country);
    if (calendar.length === 0) {
      return { errors: [{ path: ['country'], message: `the events calendar has no events for '${config.country}'; it has: ${listed(eventCountries())}` }] };
    }
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
