import { DateTime, FixedOffsetZone } from 'luxon';
import { STEP, isSubDaily, type Freq } from './frequencies.ts';
import { scanTimestamp, type ScannedTimestamp } from './timestamp-scan.ts';

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

const DAY_MS = 86_400_000;

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})(?:([T ])(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/;

/** The shape of an index entry (see IndexFormat) and its fields as text; null when it has none of the accepted shapes. */
function readShape(text: string): { format: IndexFormat; fields: (string | undefined)[] } | null {
  const m = PATTERN.exec(text);
  if (!m) return null;
  const [, , , , sep, , , ss, frac, zone] = m;
  return {
    format: { dateOnly: sep === undefined, separator: sep === ' ' ? ' ' : 'T', seconds: ss !== undefined, fractionDigits: frac?.length ?? 0, zone: zone ?? '' },
    fields: m.slice(1),
  };
}

/** Parses one index entry; null when it is not a valid calendar date or date-time. */
export function parseTimestamp(text: string): ParsedTimestamp | null {
  const shape = readShape(text);
  if (!shape) return null;
  const [y, mo, d, , hh, mi, ss, frac] = shape.fields;
  const zoneText = shape.format.zone;
  const zoneObject = zoneText === '' || zoneText === 'Z' ? 'utc' : FixedOffsetZone.instance(offsetMinutes(zoneText));
  const time = DateTime.fromObject(
    {
      year: +y!,
      month: +mo!,
      day: +d!,
      hour: hh === undefined ? 0 : +hh,
      minute: mi === undefined ? 0 : +mi,
      second: ss === undefined ? 0 : +ss,
      // The first three digits of the fraction, as timestamp-scan.ts reads them.
      millisecond: frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0')),
    },
    { zone: zoneObject },
  );
  if (!time.isValid) return null;
  return { time, format: shape.format };
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
  const shape = readShape(last);
  const wall = scanTimestamp(last).wallClock;
  if (!shape || Number.isNaN(wall)) throw new RangeError(`not a timestamp: ${last}`);
  // A date-only index cannot express sub-daily steps; the forecast gains a time of day.
  const format: IndexFormat = shape.format.dateOnly && isSubDaily(freq) ? { ...shape.format, dateOnly: false, seconds: true } : shape.format;
  const step = STEP[freq];
  if (step.kind !== 'months') {
    // Offsets are fixed (no named zones, so no daylight saving): a day is always 86,400 s and
    // the wall clock moves by exactly the step. Every forecast of a request comes through
    // here, so these steps skip luxon (its parsing and its per-step objects).
    const stepMs = step.kind === 'fixed' ? step.ms : step.days * DAY_MS;
    if (wall + stepMs * count < LAST_FOUR_DIGIT_YEAR_MS) return formatWallClockSteps(wall, stepMs, count, format);
  }
  const { time } = parseTimestamp(last)!;
  const out: string[] = new Array(count);
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

/**
 * Whether the `count` timestamps after `last` stay within the year 9999: an index entry has a
 * four-digit year, and a later one would be no ISO 8601 date the service (or a client) reads back.
 */
export function futureIndexFits(last: string, freq: Freq, count: number): boolean {
  const wall = scanTimestamp(last).wallClock;
  const step = STEP[freq];
  if (step.kind === 'months') {
    const date = new Date(wall);
    return date.getUTCFullYear() * 12 + date.getUTCMonth() + step.months * count < 10_000 * 12;
  }
  return wall + (step.kind === 'fixed' ? step.ms : step.days * DAY_MS) * count < LAST_FOUR_DIGIT_YEAR_MS;
}

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;
const pad3 = (n: number) => (n < 10 ? '00' : n < 100 ? '0' : '') + n;

/**
 * The date of a day counted from 1970-01-01, YYYY-MM-DD, for years 0 to 9999. Every forecast's
 * future index is written from here, so the calendar fields come from integer arithmetic (H.
 * Hinnant's civil_from_days), faster than a Date and its toISOString; the tests hold it to
 * luxon's calendar.
 */
function civilDate(days: number): string {
  const z = days + 719_468; // days since 0000-03-01
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153); // 0 = March
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return String(year).padStart(4, '0') + '-' + pad2(month) + '-' + pad2(day);
}

/** The time of day of `msOfDay` as the format writes it: HH:mm, then :ss and a fraction when the input has them. */
function clockTime(msOfDay: number, format: IndexFormat): string {
  const seconds = Math.floor(msOfDay / 1000);
  let clock = pad2(Math.floor(seconds / 3600)) + ':' + pad2(Math.floor(seconds / 60) % 60);
  if (format.seconds) clock += ':' + pad2(seconds % 60);
  if (format.fractionDigits > 0)
    clock +=
      '.' +
      pad3(msOfDay % 1000)
        .padEnd(format.fractionDigits, '0')
        .slice(0, format.fractionDigits);
  return clock;
}

/** formatTimestamp for wall-clock times held as epoch milliseconds read as UTC: `start + step * i` for i = 1..count. */
function formatWallClockSteps(start: number, stepMs: number, count: number, format: IndexFormat): string[] {
  const out: string[] = new Array(count);
  // Steps of a day share its date: it is written once.
  let day = NaN;
  let date = '';
  for (let i = 1; i <= count; i++) {
    const wall = start + stepMs * i;
    const days = Math.floor(wall / DAY_MS);
    if (days !== day) {
      day = days;
      date = civilDate(days);
    }
    out[i - 1] = format.dateOnly ? date : date + format.separator + clockTime(wall - days * DAY_MS, format) + format.zone;
  }
  return out;
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
  return instantOf(scanTimestamp(text));
}

const instantOf = ({ wallClock, offsetMinutes }: ScannedTimestamp): number => wallClock - offsetMinutes * 60_000;

/** A series' index read once: every entry's wall-clock and instant milliseconds (NaN if invalid). */
export interface ScannedIndex {
  readonly wallClock: Float64Array;
  readonly instant: Float64Array;
  /** Whether every entry is a valid timestamp string. */
  readonly valid: boolean;
}

const scannedIndexes = new WeakMap<readonly unknown[], ScannedIndex>();

/**
 * Reads an index array once for all its readers: validation checks its entries and their order,
 * planning needs their wall-clock times, and a large request holds hundreds of thousands of
 * entries. The result stays with the array (a weak map), so the array must not change after it
 * is scanned; validated requests are never modified.
 */
export function scanIndex(index: readonly unknown[]): ScannedIndex {
  const known = scannedIndexes.get(index);
  if (known) return known;
  const wallClock = new Float64Array(index.length);
  const instant = new Float64Array(index.length);
  let valid = true;
  for (let i = 0; i < index.length; i++) {
    const entry = index[i];
    if (typeof entry !== 'string') {
      wallClock[i] = instant[i] = NaN;
      valid = false;
      continue;
    }
    const scanned = scanTimestamp(entry);
    wallClock[i] = scanned.wallClock;
    instant[i] = instantOf(scanned);
    if (Number.isNaN(scanned.wallClock)) valid = false;
  }
  const result = { wallClock, instant, valid };
  scannedIndexes.set(index, result);
  return result;
}
