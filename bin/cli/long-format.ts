import { instantMillis } from '../../engine/time-index.ts';
import { UsageError } from './errors.ts';

/**
 * The long format of statsforecast, TimeGPT and Chronos: one row per (series, timestamp), in
 * columns `unique_id`, `ds`, `y`, in any order. The rows of each series are gathered here,
 * checked, and put in time order; the request the API takes (one `target` and `index` per
 * series) is built from them.
 */

/** The names of the three columns (flags may rename them). */
export interface LongFormatColumns {
  id: string;
  time: string;
  target: string;
}

export const DEFAULT_COLUMNS: LongFormatColumns = { id: 'unique_id', time: 'ds', target: 'y' };

/**
 * One series of the file, in time order; `rows` says where each value came from, for messages:
 * rows are numbered from 0 in the file's order, header and blank lines left out, as pandas and
 * DuckDB number them (CSV row 0 is usually line 2). Exact line numbers would cost csv-parse's
 * per-record info, which makes reading a large file much slower.
 */
export interface LongSeries {
  id: string;
  times: number[];
  index: string[];
  target: number[];
  rows: number[];
}

export interface LongFormatData {
  file: string;
  /** Every series, ordered by unique_id: this order is the request's, and so the results' series_index. */
  series: LongSeries[];
  /** Columns of the file that are not sent. */
  ignoredColumns: string[];
  rowCount: number;
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/** A timestamp as the API takes it (a date, or a date-time with `T` or a space as pandas writes it), or a refusal naming the row. */
export function parseTimestampCell(text: string, where: string, column: string): { text: string; ms: number } {
  const normalized = text.trim();
  const ms = normalized === '' ? NaN : instantMillis(normalized);
  if (Number.isNaN(ms)) {
    throw new UsageError(`${where}: ${column} ${text.trim() === '' ? 'is empty' : `'${text}' is not a date (YYYY-MM-DD) or an ISO 8601 date-time`}`);
  }
  return { text: normalized, ms };
}

/** A target value: a finite number written as one; missing values are refused (the API has no gaps in a target). */
export function parseTargetCell(value: string | number | null, where: string, column: string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value)) return value;
    throw new UsageError(`${where}: ${column} is ${value}; the service needs a finite number at every timestamp`);
  }
  const text = (value ?? '').trim();
  if (text === '') throw new UsageError(`${where}: ${column} is empty; the service needs a value at every timestamp (fill or drop missing rows first)`);
  if (!NUMBER.test(text)) throw new UsageError(`${where}: ${column} '${text}' is not a number`);
  const number = Number(text);
  // Past a double's range (1e400) the text reads as Infinity, which JSON cannot carry.
  if (!Number.isFinite(number)) throw new UsageError(`${where}: ${column} '${text}' is beyond the range of a number the service takes`);
  return number;
}

/** Collects rows into series and keeps an estimate of the JSON body they make, to stop early when it is too large. */
export class SeriesCollector {
  private readonly byId = new Map<string, LongSeries>();
  private estimatedBytes = 0;
  private rows = 0;

  constructor(
    private readonly file: string,
    private readonly maxBodyBytes: number,
  ) {}

  add(id: string, time: { text: string; ms: number }, value: number, row: number): void {
    let series = this.byId.get(id);
    if (!series) {
      series = { id, times: [], index: [], target: [], rows: [] };
      this.byId.set(id, series);
      this.estimatedBytes += 40;
    }
    series.times.push(time.ms);
    series.index.push(time.text);
    series.target.push(value);
    series.rows.push(row);
    this.rows++;
    // `"<ds>",` in index and `<y>,` in target.
    this.estimatedBytes += time.text.length + 4 + String(value).length;
    if (this.estimatedBytes > this.maxBodyBytes) {
      throw new UsageError(
        `${this.file} is too large for one request: its first ${this.rows} rows already make a body over ${formatBytes(this.maxBodyBytes)}`,
        [
          "that is the server's default limit (MAX_BODY_BYTES); where the server allows more, say so with --max-body-bytes",
          'otherwise split the file by unique_id and submit each part as its own job',
        ],
      );
    }
  }

  /** The series ordered by id, each in time order; two rows of one series at the same time are refused. */
  finish(ignoredColumns: string[]): LongFormatData {
    if (this.rows === 0) throw new UsageError(`${this.file} has no rows`);
    const series = [...this.byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const s of series) sortByTime(s);
    return { file: this.file, series, ignoredColumns, rowCount: this.rows };
  }
}

function sortByTime(series: LongSeries): void {
  const order = series.times.map((_, i) => i);
  const inOrder = order.every((i) => i === 0 || series.times[i - 1] < series.times[i]);
  if (!inOrder) {
    order.sort((a, b) => series.times[a] - series.times[b] || series.rows[a] - series.rows[b]);
    for (const key of ['times', 'index', 'target', 'rows'] as const) {
      const column = series[key] as unknown[];
      const sorted = order.map((i) => column[i]);
      sorted.forEach((value, k) => (column[k] = value));
    }
  }
  for (let i = 1; i < series.times.length; i++) {
    if (series.times[i] === series.times[i - 1]) {
      throw new UsageError(
        `series '${series.id}' has two rows at ${series.index[i]} (rows ${series.rows[i - 1]} and ${series.rows[i]}); each timestamp may appear once per series`,
      );
    }
  }
}

/** A size as people read it: 64.0 MiB, 4.0 KiB, 900 bytes. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`;
}
