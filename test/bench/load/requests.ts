/**
 * The request bodies of the load benchmark: small synchronous forecasts, small jobs, and the large
 * job that keeps the worker busy while the mixed phase runs.
 */

const HOUR_MS = 3_600_000;
const START_MS = Date.UTC(2024, 0, 1);

/** Hourly series with a daily cycle and some deterministic noise, `count` of them over `length` steps. */
export function hourlySeries(count: number, length: number, fcds: number[] = []) {
  const index = Array.from({ length }, (_, t) => new Date(START_MS + t * HOUR_MS).toISOString().slice(0, 19));
  return Array.from({ length: count }, (_, k) => ({
    target: index.map((_, t) => Math.round(100 + k + 20 * Math.sin((2 * Math.PI * t) / 24) + ((t * 7919 + k * 104729) % 13))),
    index,
    ...(fcds.length > 0 ? { fcds } : {}),
  }));
}

/** A small synchronous forecast: one series of two days, the next 24 hours, the default quantiles. */
export const SMALL_FORECAST = JSON.stringify({ series: hourlySeries(1, 48), horizon: 24, freq: 'H' });

/** A small job: two series, each forecast at two creation dates (so that it has metrics), 12 hours ahead. */
export const SMALL_JOB = JSON.stringify({ series: hourlySeries(2, 72, [48, 60]), horizon: 12, freq: 'H' });

/**
 * The large job: `series` series of two weeks, each forecast at `fcds` creation dates spread over
 * its second week, 24 hours ahead.
 */
export function largeJob(series: number, fcds: number): string {
  const length = 14 * 24;
  const dates = Array.from({ length: fcds }, (_, i) => length - 24 - Math.floor((i * 7 * 24) / fcds));
  return JSON.stringify({ series: hourlySeries(series, length, dates.reverse()), horizon: 24, freq: 'H' });
}
