/**
 * Durations of the beta interface (`frequency`, `prediction_length`, `context`, `cutoff.every`): a
 * positive whole number and a unit, `<n><unit>`: s, min, h, d, w (7 days), mo (calendar months),
 * q (3 months), y (12 months). `m` alone is refused: it reads as minutes to some and months to
 * others. Every time is UTC, so a day is always 24 hours; months, quarters and years follow the
 * calendar (docs/decisions/043-beta-query-and-time.md).
 */

export type Duration =
  { readonly text: string; readonly kind: 'fixed'; readonly ms: number } | { readonly text: string; readonly kind: 'months'; readonly months: number };

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

const FIXED_UNITS: Record<string, number> = { s: SECOND, min: MINUTE, h: HOUR, d: DAY, w: WEEK };
const MONTH_UNITS: Record<string, number> = { mo: 1, q: 3, y: 12 };

/** The grammar as a regular expression (also published in the OpenAPI document). */
export const DURATION_PATTERN = '^[1-9][0-9]{0,5}(s|min|h|d|w|mo|q|y)$';
const PATTERN = /^(?<n>[1-9][0-9]{0,5})(?<unit>s|min|h|d|w|mo|q|y)$/;

export const DURATION_HELP = 'a duration is a whole number and a unit: s, min, h, d, w, mo, q or y (for example 15min, 1h, 1d, 7d, 1w, 1mo, 1q, 1y)';

export function parseDuration(text: string): Duration | null {
  const m = PATTERN.exec(text);
  if (!m?.groups) return null;
  const n = Number(m.groups.n);
  const unit = m.groups.unit;
  if (unit in MONTH_UNITS) return { text, kind: 'months', months: n * MONTH_UNITS[unit] };
  return { text, kind: 'fixed', ms: n * FIXED_UNITS[unit] };
}

/** Why a string is not a duration, for the 422 message. */
export function durationProblem(text: string): string {
  if (/^\d+\s*[mM]$/.test(text)) return `'${text}' is ambiguous: write 'min' for minutes or 'mo' for months (${DURATION_HELP})`;
  return `'${text}' is not a duration: ${DURATION_HELP}`;
}

/** Parses a duration already checked by the query schema. */
export function duration(text: string): Duration {
  const d = parseDuration(text);
  if (!d) throw new Error(durationProblem(text));
  return d;
}

/** How many `step`s make `d`: a whole number, or null when `d` is not a whole multiple. */
export function wholeSteps(d: Duration, step: Duration): number | null {
  if (d.kind !== step.kind) return null;
  const ratio = d.kind === 'fixed' ? d.ms / (step as { ms: number }).ms : d.months / (step as { months: number }).months;
  return Number.isInteger(ratio) ? ratio : null;
}

/** `k` times `d` after (or, with a negative k, before) the instant `ms`, on the UTC calendar. */
export function addDuration(ms: number, d: Duration, k = 1): number {
  if (d.kind === 'fixed') return ms + k * d.ms;
  const t = new Date(ms);
  const month = t.getUTCMonth() + k * d.months;
  // Clamp the day of month, as calendars do: 31 March minus a month is 29 February.
  const lastDay = new Date(Date.UTC(t.getUTCFullYear(), month + 1, 0)).getUTCDate();
  return Date.UTC(t.getUTCFullYear(), month, Math.min(t.getUTCDate(), lastDay), t.getUTCHours(), t.getUTCMinutes(), t.getUTCSeconds(), t.getUTCMilliseconds());
}

/**
 * Where the frequency grid is anchored. Day and week multiples start on Monday 2000-01-03 (so
 * `1w` and `7d` buckets are ISO weeks), shorter steps at midnight of that day, and month
 * multiples on January 2000 (so `3mo` buckets are calendar quarters). These are DuckDB's own
 * `time_bucket` defaults, passed explicitly so the TypeScript and SQL grids cannot drift apart.
 */
export const FIXED_ORIGIN_MS = Date.UTC(2000, 0, 3);
export const MONTH_ORIGIN_MS = Date.UTC(2000, 0, 1);

/** The start of the grid bucket holding `ms`. */
export function floorToGrid(ms: number, step: Duration): number {
  if (step.kind === 'fixed') return FIXED_ORIGIN_MS + Math.floor((ms - FIXED_ORIGIN_MS) / step.ms) * step.ms;
  const t = new Date(ms);
  const index = (t.getUTCFullYear() - 2000) * 12 + t.getUTCMonth();
  const bucket = Math.floor(index / step.months) * step.months;
  return Date.UTC(2000, bucket, 1);
}

/** Grid steps from `from` to `to`, both on the grid of `step`. */
export function stepsBetween(from: number, to: number, step: Duration): number {
  if (step.kind === 'fixed') return Math.round((to - from) / step.ms);
  const a = new Date(from);
  const b = new Date(to);
  return Math.round(((b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth()) / step.months);
}

/** `k` times `d` as an ISO 8601 duration: P1D, PT1H, PT15M, P7D, P1M, P1Y3M. */
export function isoDuration(d: Duration, k = 1): string {
  if (d.kind === 'months') {
    const total = d.months * k;
    const years = Math.floor(total / 12);
    const months = total % 12;
    return `P${years ? `${years}Y` : ''}${months || !years ? `${months}M` : ''}`;
  }
  let rest = d.ms * k;
  const days = Math.floor(rest / DAY);
  rest -= days * DAY;
  const hours = Math.floor(rest / HOUR);
  rest -= hours * HOUR;
  const minutes = Math.floor(rest / MINUTE);
  rest -= minutes * MINUTE;
  const seconds = rest / SECOND;
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds ? `${seconds}S` : ''}`;
  return `P${days ? `${days}D` : ''}${time ? `T${time}` : ''}` || 'PT0S';
}

/** A DuckDB INTERVAL literal for the duration. */
export function sqlInterval(d: Duration): string {
  if (d.kind === 'months') return `INTERVAL '${d.months} months'`;
  return d.ms % DAY === 0 ? `INTERVAL '${d.ms / DAY} days'` : `INTERVAL '${d.ms} milliseconds'`;
}

/** A DuckDB TIMESTAMP literal of the grid's origin. */
export function sqlGridOrigin(d: Duration): string {
  return d.kind === 'months' ? "TIMESTAMP '2000-01-01 00:00:00'" : "TIMESTAMP '2000-01-03 00:00:00'";
}

/**
 * The seasonal period handed to the models for a beta frequency: the first natural cycle that
 * holds a whole number (at least 2) of steps. Sub-5-minute steps try the hour first (as the
 * stable API's 10S and min do); other fixed steps try the day, the week, then the 52-week year;
 * calendar steps try the year. 1h -> 24, 15min -> 96, 1d -> 7, 1w and 7d -> 52, 2w -> 26,
 * 1mo -> 12, 1q -> 4, 1y -> 1; a step that divides no cycle (5h) gets 1 (no season).
 */
export function seasonLengthFor(freq: Duration): number {
  if (freq.kind === 'months') {
    const season = 12 / freq.months;
    return Number.isInteger(season) && season >= 2 ? season : 1;
  }
  const cycles = freq.ms < 5 * MINUTE ? [HOUR, DAY] : [DAY, WEEK, 52 * WEEK];
  for (const cycle of cycles) {
    const season = cycle / freq.ms;
    if (Number.isInteger(season) && season >= 2) return season;
  }
  return 1;
}

/**
 * Every seasonal period for a model of several seasonalities (mstl): the first two natural cycles
 * holding a whole number (at least 2) of steps, by seasonLengthFor's cycles and the week after
 * them: 1h -> 24, 168; 15min -> 96, 672; 1d -> 7, 364; calendar steps -> the year alone.
 */
export function seasonLengthsFor(freq: Duration): number[] {
  const first = seasonLengthFor(freq);
  if (freq.kind === 'months' || first === 1) return [first];
  const cycles = freq.ms < 5 * MINUTE ? [HOUR, DAY, WEEK] : [DAY, WEEK, 52 * WEEK];
  const whole = cycles.map((cycle) => cycle / freq.ms).filter((s) => Number.isInteger(s) && s >= 2);
  return whole.slice(0, 2);
}

/** An instant as the response writes it: ISO 8601 in UTC, to the second (`2024-01-31T00:00:00Z`). */
export function isoTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}
