/**
 * Loader for `monthly-panels.csv.gz`, `monthly-panels-long.csv.gz` and `quarterly-panels.csv.gz`
 * (see datasets/README.md): real monthly and quarterly series with their calendar, written by
 * tools/reference/monthly-panels.py and quarterly-panels.py. Long format `unique_id,month,y` (`month` as YYYY-MM: a quarter's first
 * month), rows grouped by series, each oldest first, one step apart.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export interface CalendarSeries {
  readonly id: string;
  /** The first value's month (a quarter's first month), as UTC milliseconds of its first day. */
  readonly start: number;
  readonly y: Float64Array;
}

export const MONTHLY_PANELS_PATH = new URL('./monthly-panels.csv.gz', import.meta.url).pathname;
export const MONTHLY_PANELS_LONG_PATH = new URL('./monthly-panels-long.csv.gz', import.meta.url).pathname;
export const QUARTERLY_PANELS_PATH = new URL('./quarterly-panels.csv.gz', import.meta.url).pathname;

const monthStart = (month: string): number => Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1, 1);
/** The first day of the month `months` after the month of `at` (UTC milliseconds). */
export const monthsLater = (at: number, months: number): number => Date.UTC(new Date(at).getUTCFullYear(), new Date(at).getUTCMonth() + months, 1);

/** The series of a file whose rows are `monthsPerStep` months apart: 1 monthly, 3 quarterly. */
export function loadCalendarPanels(path: string, monthsPerStep: number): CalendarSeries[] {
  const lines = gunzipSync(readFileSync(path)).toString('utf8').split('\n');
  if (lines[0].trim() !== 'unique_id,month,y') throw new Error(`${path}: unexpected header "${lines[0]}"`);
  const out: { id: string; start: number; next: number; y: number[] }[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const [id, month, y] = line.split(',');
    const at = monthStart(month);
    const last = out[out.length - 1];
    if (!last || last.id !== id) out.push({ id, start: at, next: monthsLater(at, monthsPerStep), y: [Number(y)] });
    else if (at !== last.next) throw new Error(`${path}: line ${i + 1}: ${id} does not go on from the step before to ${month}`);
    else {
      last.y.push(Number(y));
      last.next = monthsLater(at, monthsPerStep);
    }
  }
  return out.map((s) => ({ id: s.id, start: s.start, y: Float64Array.from(s.y) }));
}
