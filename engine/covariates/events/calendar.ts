/**
 * Loader of the events calendar shipped in this folder (`events-calendar.csv`): recurring events
 * beyond public holidays (shopping days, sport, observances, clock changes), per ISO country code or
 * `Global`. Each row's rule (`fixed:`, `nth:`, `easter:`, `sunday_before:`, `dates:`, with `|avoid=`)
 * gives its days in any year; the grammar and the sources are in README.md beside it. Outside the
 * span a `dates:` list covers, an event is unknown (`known`), so a covariate is missing there, not 0.
 */
import fs from 'node:fs';

export interface CalendarEvent {
  readonly country: string;
  readonly event: string;
  readonly category: string;
  readonly rule: string;
  readonly firstYear: number | null;
  readonly lastYear: number | null;
  readonly source: string;
  /** UTC midnights (epoch ms) of the event's days in `year`; empty outside first/last year. */
  daysIn(year: number): number[];
  /** False for a year a `dates:` event's list does not cover (unknown, rather than no event). */
  known(year: number): boolean;
}

const DOW = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];
const DAY_MS = 86_400_000;

/** Western Easter Sunday (anonymous Gregorian algorithm), as UTC midnight epoch ms. */
export function easterSunday(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return Date.UTC(year, month - 1, day);
}

/** The N-th (N >= 1) or last (N = -1) weekday `dow` (0 = Sunday) of a month. */
function nthWeekday(year: number, month: number, dow: number, n: number): number {
  if (n > 0) {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return Date.UTC(year, month - 1, 1 + ((dow - first + 7) % 7) + 7 * (n - 1));
  }
  const lastDay = new Date(Date.UTC(year, month, 0));
  const back = (lastDay.getUTCDay() - dow + 7) % 7;
  return lastDay.getTime() - (back + 7 * (-n - 1)) * DAY_MS;
}

const parseDay = (text: string): number => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) throw new Error(`bad date "${text}"`);
  const t = Date.UTC(+m[1], +m[2] - 1, +m[3]);
  if (new Date(t).getUTCDate() !== +m[3]) throw new Error(`bad date "${text}"`);
  return t;
};

/** A rule compiled to a function of the year; throws on a malformed rule. */
export function compileRule(rule: string): (year: number) => number[] {
  const [main, ...modifiers] = rule.split('|');
  if (main.startsWith('dates:')) {
    const days: number[] = [];
    for (const part of rule.slice('dates:'.length).split('|')) {
      const [from, to] = part.split('..');
      const start = parseDay(from);
      const end = to === undefined ? start : parseDay(to);
      if (end < start) throw new Error(`range ${part} ends before it starts`);
      for (let t = start; t <= end; t += DAY_MS) days.push(t);
    }
    return (year) => days.filter((t) => new Date(t).getUTCFullYear() === year);
  }
  let base: (year: number) => number;
  let m: RegExpExecArray | null;
  if ((m = /^fixed:(\d{2})-(\d{2})$/.exec(main))) {
    const [month, day] = [+m[1], +m[2]];
    if (month < 1 || month > 12 || day < 1 || day > 31) throw new Error(`bad fixed day in "${rule}"`);
    base = (year) => Date.UTC(year, month - 1, day);
  } else if ((m = /^nth:(\d{2}):([A-Z]{3}):(-1|[1-5])([+-]\d+)?$/.exec(main))) {
    const [month, dow, n, shift] = [+m[1], DOW.indexOf(m[2]), +m[3], Number(m[4] ?? 0)];
    if (dow < 0 || month < 1 || month > 12) throw new Error(`bad weekday rule "${rule}"`);
    base = (year) => nthWeekday(year, month, dow, n) + shift * DAY_MS;
  } else if ((m = /^easter:([+-]?\d+)$/.exec(main))) {
    const shift = Number(m[1]);
    base = (year) => easterSunday(year) + shift * DAY_MS;
  } else if ((m = /^sunday_before:(\d{2})-(\d{2}):([1-9])$/.exec(main))) {
    const [month, day, n] = [+m[1], +m[2], +m[3]];
    base = (year) => {
      const anchor = Date.UTC(year, month - 1, day);
      const back = new Date(anchor).getUTCDay() || 7;
      return anchor - (back + 7 * (n - 1)) * DAY_MS;
    };
  } else {
    throw new Error(`unknown rule "${rule}"`);
  }
  for (const modifier of modifiers) {
    const a = /^avoid=easter:([+-]?\d+):([+-]\d+)$/.exec(modifier);
    if (!a) throw new Error(`unknown rule modifier "${modifier}" in "${rule}"`);
    const [offset, move] = [Number(a[1]), Number(a[2])];
    const inner = base;
    base = (year) => {
      const t = inner(year);
      return t === easterSunday(year) + offset * DAY_MS ? t + move * DAY_MS : t;
    };
  }
  const compiled = base;
  return (year) => [compiled(year)];
}

const HEADER = 'country,event,category,rule,first_year,last_year,source';

/** Parses the calendar CSV (no quoted fields: rules and URLs hold no commas). */
export function parseEventsCsv(text: string, source = 'events calendar'): CalendarEvent[] {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines[0]?.trim() !== HEADER) throw new Error(`${source}: header must be "${HEADER}"`);
  const seen = new Set<string>();
  return lines.slice(1).map((line, i) => {
    const fields = line.split(',');
    const where = `${source}:${i + 2}`;
    if (fields.length !== 7) throw new Error(`${where}: expected 7 fields, got ${fields.length}`);
    const [country, event, category, rule, first, last, url] = fields.map((f) => f.trim());
    if (!/^([A-Z]{2}|Global)$/.test(country)) throw new Error(`${where}: country "${country}" is not a 2-letter code or Global`);
    if (!/^[a-z0-9_]+$/.test(event)) throw new Error(`${where}: event name "${event}" must be lower_snake_case`);
    if (seen.has(`${country}/${event}`)) throw new Error(`${where}: ${country} ${event} is listed twice`);
    seen.add(`${country}/${event}`);
    if (!/^https:\/\//.test(url)) throw new Error(`${where}: every event needs a source URL`);
    const year = (s: string) => {
      if (s === '') return null;
      if (!/^\d{4}$/.test(s)) throw new Error(`${where}: bad year "${s}"`);
      return Number(s);
    };
    const firstYear = year(first);
    const lastYear = year(last);
    let days: (year: number) => number[];
    try {
      days = compileRule(rule);
    } catch (e) {
      throw new Error(`${where}: ${(e as Error).message}`);
    }
    const listed = rule.startsWith('dates:');
    return {
      country,
      event,
      category,
      rule,
      firstYear,
      lastYear,
      source: url,
      known: (y: number) => !listed || ((firstYear === null || y >= firstYear) && (lastYear === null || y <= lastYear)),
      daysIn: (y: number) => ((firstYear !== null && y < firstYear) || (lastYear !== null && y > lastYear) ? [] : days(y)),
    };
  });
}

export function eventsCalendarPath(): string {
  return new URL('./events-calendar.csv', import.meta.url).pathname;
}

let cached: CalendarEvent[] | undefined;

/** The shipped calendar, parsed once per process. */
export function loadEventsCalendar(): CalendarEvent[] {
  cached ??= parseEventsCsv(fs.readFileSync(eventsCalendarPath(), 'utf8'), eventsCalendarPath());
  return cached;
}
