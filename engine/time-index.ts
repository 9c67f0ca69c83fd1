import { DateTime, FixedOffsetZone } from 'luxon';
import { STEP, isSubDaily, type Freq } from './frequencies.ts';
import { scanTimestamp } from './timestamp-scan.ts';

/**
 * Index entries are dates (`2024-01-31`) or date-times (`2024-01-31T10:00:00`, optional
 * fraction, optional `Z` or `+01:00` offset, `T` or a space between date and time).
 * Forecast timestamps are written back in the same shape as the input's last entry.
 */
interface IndexFormat {
  dateOnly: boolean;
  separator: 'T' | ' ';
  seconds: boolean;
  fractionDigits: number;
  /** The literal zone suffix of the input: '', 'Z', '+01:00' or '+0100'. */
  zone: string;
}

export interface ParsedTimestamp {
  time: DateTime;
  format: IndexFormat;
}

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:([T ])(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** Parses one index entry; null when it is not a valid calendar date or date-time. */
export function parseTimestamp(text: string): ParsedTimestamp | null {
  const m = PATTERN.exec(text);
  if (!m) return null;
  const [, y, mo, d, sep, hh, mi, ss, frac, zone] = m;
  const zoneText = zone ?? '';
  const zoneObject = zoneText === '' || zoneText === 'Z' ? 'utc' : FixedOffsetZone.instance(offsetMinutes(zoneText));
  const time = DateTime.fromObject(
    {
      year: +y,
      month: +mo,
      day: +d,
      hour: hh === undefined ? 0 : +hh,
      minute: mi === undefined ? 0 : +mi,
      second: ss === undefined ? 0 : +ss,
      // The first three digits of the fraction, as timestamp-scan.ts reads them.
      millisecond: frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0')),
    },
    { zone: zoneObject },
  );
  if (!time.isValid) return null;
  return {
    time,
    format: {
      dateOnly: sep === undefined,
      separator: sep === ' ' ? ' ' : 'T',
      seconds: ss !== undefined,
      fractionDigits: frac?.length ?? 0,
      zone: zoneText,
    },
  };
}

function offsetMinutes(zone: string): number {
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
}

export function formatTimestamp(time: DateTime, format: IndexFormat): string {
  const date = time.toFormat('yyyy-MM-dd');
  if (format.dateOnly) return date;
  let clock = time.toFormat(format.seconds ? 'HH:mm:ss' : 'HH:mm');
  if (format.fractionDigits > 0) {
    clock += '.' + String(time.millisecond).padStart(3, '0').padEnd(format.fractionDigits, '0').slice(0, format.fractionDigits);
  }
  return date + format.separator + clock + format.zone;
}

/**
 * The `count` timestamps that follow `last` on the frequency's grid.
 * Monthly, quarterly and yearly steps keep the input's anchor: a month-end date continues
 * on month ends (Jan 31 -> Feb 29 -> Mar 31), any other day keeps its day of month, clamped
 * to shorter months and counted from `last` so that it never drifts (Jan 30 -> Feb 29 -> Mar 30).
 */
export function buildFutureIndex(last: string, freq: Freq, count: number): string[] {
  const parsed = parseTimestamp(last);
  if (!parsed) throw new RangeError(`not a timestamp: ${last}`);
  const { time } = parsed;
  // A date-only index cannot express sub-daily steps; the forecast gains a time of day.
  const format: IndexFormat = parsed.format.dateOnly && isSubDaily(freq) ? { ...parsed.format, dateOnly: false, seconds: true } : parsed.format;
  const step = STEP[freq];
  const out: string[] = new Array(count);
  if (step.kind !== 'months') {
    // Offsets are fixed (no named zones, so no daylight saving): a day is always 86,400 s and
    // the wall clock moves by exactly the step. Every forecast of a request comes through
    // here, so these steps skip luxon's per-step objects.
    const stepMs = step.kind === 'fixed' ? step.ms : step.days * 86_400_000;
    const wall = time.toMillis() + time.offset * 60_000;
    if (wall + stepMs * count < LAST_FOUR_DIGIT_YEAR_MS) {
      for (let i = 1; i <= count; i++) out[i - 1] = formatWallClock(wall + stepMs * i, format);
      return out;
    }
  }
  const monthEnd = time.day === time.daysInMonth;
  for (let i = 1; i <= count; i++) {
    let next: DateTime;
    if (step.kind === 'fixed') next = time.plus({ milliseconds: step.ms * i });
    else if (step.kind === 'days') next = time.plus({ days: step.days * i });
    else {
      next = time.plus({ months: step.months * i });
      if (monthEnd) next = next.set({ day: next.daysInMonth });
    }
    out[i - 1] = formatTimestamp(next, format);
  }
  return out;
}

/** Up to here toISOString writes the year with four digits, as the index does. */
const LAST_FOUR_DIGIT_YEAR_MS = Date.UTC(10_000, 0, 1);

/** formatTimestamp for a wall-clock time held as epoch milliseconds read as UTC. */
function formatWallClock(wall: number, format: IndexFormat): string {
  const iso = new Date(wall).toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
  if (format.dateOnly) return iso.slice(0, 10);
  let clock = iso.slice(11, format.seconds ? 19 : 16);
  if (format.fractionDigits > 0) clock += '.' + iso.slice(20, 23).padEnd(format.fractionDigits, '0').slice(0, format.fractionDigits);
  return iso.slice(0, 10) + format.separator + clock + format.zone;
}

/**
 * The wall-clock time of an index entry in its own offset, as epoch milliseconds read as UTC.
 * Calendar features (hour of day, holidays) need the local wall clock, not the instant.
 */
export function wallClockMillis(text: string): number {
  const t = scanTimestamp(text).wallClock;
  if (Number.isNaN(t)) throw new RangeError(`not a timestamp: ${text}`);
  return t;
}

/** The instant an index entry names (its offset applied; none means UTC), or NaN if invalid. */
export function instantMillis(text: string): number {
  const { wallClock, offsetMinutes } = scanTimestamp(text);
  return wallClock - offsetMinutes * 60_000;
}
