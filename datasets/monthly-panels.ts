/**
 * Loader for `monthly-panels.csv.gz` (see datasets/README.md): real monthly series with their
 * calendar months, written by tools/reference/monthly-panels.py. Long format
 * `unique_id,month,y` (month as YYYY-MM), rows grouped by series, each oldest first.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export interface MonthlyPanelSeries {
  readonly id: string;
  /** The first value's month, as UTC milliseconds of its first day. */
  readonly start: number;
  readonly y: Float64Array;
}

export const MONTHLY_PANELS_PATH = new URL('./monthly-panels.csv.gz', import.meta.url).pathname;

const monthStart = (month: string): number => Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 1, 1);
const nextMonth = (at: number): number => Date.UTC(new Date(at).getUTCFullYear(), new Date(at).getUTCMonth() + 1, 1);

export function loadMonthlyPanels(path = MONTHLY_PANELS_PATH): MonthlyPanelSeries[] {
  const lines = gunzipSync(readFileSync(path)).toString('utf8').split('\n');
  if (lines[0].trim() !== 'unique_id,month,y') throw new Error(`${path}: unexpected header "${lines[0]}"`);
  const out: { id: string; start: number; next: number; y: number[] }[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const [id, month, y] = line.split(',');
    const at = monthStart(month);
    const last = out[out.length - 1];
    if (!last || last.id !== id) out.push({ id, start: at, next: nextMonth(at), y: [Number(y)] });
    else if (at !== last.next) throw new Error(`${path}: line ${i + 1}: ${id} does not go on from the month before to ${month}`);
    else {
      last.y.push(Number(y));
      last.next = nextMonth(at);
    }
  }
  return out.map((s) => ({ id: s.id, start: s.start, y: Float64Array.from(s.y) }));
}
