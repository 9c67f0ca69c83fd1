import { toMillis } from './time.ts';

/** A series of a long-format table: its id and its observations in time order. */
export interface ParsedSeries {
  name: string;
  index: string[];
  target: number[];
}

/** A CSV refusal naming the line (1-based, the header is line 1) and the column. */
export class CsvError extends Error {}

/** Rows of a CSV text (RFC 4180: quoted fields, doubled quotes inside them, CRLF or LF). */
export function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/**
 * The long format of statsforecast, TimeGPT and Chronos: columns `unique_id`, `ds`, `y` (any
 * order, any case, other columns ignored; without `unique_id` the table is one series). Rows are
 * grouped by id in order of first appearance and sorted by time within each series.
 */
export function parseLongCsv(text: string): ParsedSeries[] {
  const rows = csvRows(text.trim()).map((r) => r.map((f) => f.trim()));
  if (rows.length < 2) throw new CsvError('the CSV needs a header line (unique_id,ds,y) and at least one row');
  const header = rows[0].map((h) => h.toLowerCase());
  const column = (name: string) => header.indexOf(name);
  const [id, ds, y] = [column('unique_id'), column('ds'), column('y')];
  const missing = [ds < 0 && 'ds', y < 0 && 'y'].filter(Boolean);
  if (missing.length > 0)
    throw new CsvError(`line 1: the header has no ${missing.join(' and no ')} column (expected unique_id,ds,y; found ${rows[0].join(',')})`);

  const byName = new Map<string, { time: number; entry: string; value: number; line: number }[]>();
  rows.slice(1).forEach((row, k) => {
    const line = k + 2;
    if (row.length === 1 && row[0] === '') return;
    const name = id >= 0 ? row[id] : 'series';
    const entry = (row[ds] ?? '').replace(' ', 'T');
    const time = toMillis(entry);
    if (!entry || Number.isNaN(time)) throw new CsvError(`line ${line}: ds '${row[ds] ?? ''}' is not a date (YYYY-MM-DD) or an ISO 8601 date-time`);
    const value = Number(row[y]);
    if (row[y] === undefined || row[y] === '' || !Number.isFinite(value)) throw new CsvError(`line ${line}: y '${row[y] ?? ''}' is not a number`);
    const list = byName.get(name) ?? [];
    list.push({ time, entry, value, line });
    byName.set(name, list);
  });
  if (byName.size === 0) throw new CsvError('the CSV has a header but no rows');
  return [...byName].map(([name, points]) => {
    points.sort((a, b) => a.time - b.time);
    points.forEach((p, i) => {
      if (i > 0 && p.time === points[i - 1].time)
        throw new CsvError(`line ${p.line}: series '${name}' has ds ${p.entry} twice (lines ${points[i - 1].line} and ${p.line})`);
    });
    return { name, index: points.map((p) => p.entry), target: points.map((p) => p.value) };
  });
}
