/**
 * The hot path of index entries: validation and planning read every timestamp of every series, so
 * this reads the one shape the API accepts character by character (no regular expression, no
 * substrings, no Date objects). engine/time-index.ts `parseTimestamp` (luxon) is the oracle the tests
 * compare it with. Shape: YYYY-MM-DD, optionally `T` or a space and HH:MM, optionally :SS with a
 * fraction of 1 to 9 digits, then optionally `Z` or an offset +HH:MM / +HHMM.
 */

/** A scanned entry: its calendar fields as epoch milliseconds read as UTC, and its offset. */
export interface ScannedTimestamp {
  /** NaN when the text is not a valid entry. */
  wallClock: number;
  /** Minutes east of UTC; 0 for no offset and for `Z`. */
  offsetMinutes: number;
}

const ZERO = 48;
const DASH = 45;
const PLUS = 43;
const COLON = 58;
const DOT = 46;
const T = 84;
const SPACE = 32;
const Z = 90;

/** The value of `count` ASCII digits at `at`, or -1 when one of them is not a digit. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - ZERO;
    if (!(d >= 0 && d <= 9)) return -1; // NaN past the end fails too
    value = value * 10 + d;
  }
  return value;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const DAY_MS = 86_400_000;

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return MONTH_DAYS[month - 1];
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
 * days_from_civil): integer arithmetic, cheaper than Date.UTC, and right for years
 * 0-99 too (which Date.UTC reads as 1900-1999).
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return era * 146_097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719_468;
}

/** Fields range-checked against the proleptic Gregorian calendar, as epoch milliseconds (what Date.UTC gives). */
function calendarMillis(year: number, month: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return NaN;
  return daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

const INVALID: ScannedTimestamp = Object.freeze({ wallClock: NaN, offsetMinutes: 0 });

/** Reads one index entry. */
export function scanTimestamp(text: string): ScannedTimestamp {
  const length = text.length;
  if (length < 10 || text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return INVALID;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  if (year < 0 || month < 0 || day < 0) return INVALID;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let ms = 0;
  let offsetMinutes = 0;
  let at = 10;
  if (at < length) {
    const separator = text.charCodeAt(at);
    if ((separator !== T && separator !== SPACE) || text.charCodeAt(at + 3) !== COLON) return INVALID;
    hour = digits(text, at + 1, 2);
    minute = digits(text, at + 4, 2);
    if (hour < 0 || minute < 0) return INVALID;
    at += 6;
    if (text.charCodeAt(at) === COLON) {
      second = digits(text, at + 1, 2);
      if (second < 0) return INVALID;
      at += 3;
      if (text.charCodeAt(at) === DOT) {
        // Milliseconds are the first three digits of the fraction; the rest is dropped.
        let end = at + 1;
        while (end < length && digits(text, end, 1) >= 0) {
          if (end - at <= 3) ms += digits(text, end, 1) * 10 ** (3 - (end - at));
          end++;
        }
        if (end - at - 1 < 1 || end - at - 1 > 9) return INVALID;
        at = end;
      }
    }
    if (at < length) {
      const sign = text.charCodeAt(at);
      if (sign === Z) at += 1;
      else if (sign === PLUS || sign === DASH) {
        const colon = text.charCodeAt(at + 3) === COLON ? 1 : 0;
        const hours = digits(text, at + 1, 2);
        const minutes = digits(text, at + 3 + colon, 2);
        // RFC 3339's offsets: hours 00 to 23, minutes 00 to 59 (a typo such as +99:99 is no offset).
        if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return INVALID;
        offsetMinutes = (sign === DASH ? -1 : 1) * (hours * 60 + minutes);
        at += 5 + colon;
      }
    }
  }
  if (at !== length) return INVALID;
  const wallClock = calendarMillis(year, month, day, hour, minute, second, ms);
  return Number.isNaN(wallClock) ? INVALID : { wallClock, offsetMinutes };
}
