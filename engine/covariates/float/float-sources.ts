import fs from 'node:fs';
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

/**
 * Float data sources: Parquet or CSV files placed in `FLOAT_SOURCES_DIR` (config.ts); the file
 * `prices.parquet` (or `.csv`, `.csv.gz`) is the source `prices`, its time column found by name, its
 * numeric columns the `column`s a request may name (docs/api.md, "Covariates"). The planner is
 * synchronous, so reads go to a DuckDB worker thread and this thread waits (Atomics.wait); answers
 * are cached per file version (path, size, modification time).
 */

const EXTENSIONS = ['.parquet', '.csv.gz', '.csv'] as const;
const TIME_NAMES = new Set(['ds', 'date', 'time', 'timestamp', 'datetime']);
const NUMERIC = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|REAL|DECIMAL\(\d+,\s*\d+\))$/;
const TEMPORAL = /^(DATE|TIMESTAMP|TIMESTAMP_S|TIMESTAMP_MS|TIMESTAMP_NS|TIMESTAMP WITH TIME ZONE)$/;

export interface FloatSource {
  readonly name: string;
  readonly path: string;
  /** The column that holds the times, or null when the file has none (then it is unusable). */
  readonly timeColumn: string | null;
  /** Columns a request may name. */
  readonly numericColumns: readonly string[];
  /** Every column with its DuckDB type, for messages. */
  readonly columns: readonly { name: string; type: string }[];
}

export interface FloatSeries {
  /** Wall-clock epoch milliseconds, ascending. */
  readonly times: Float64Array;
  /** NaN where the file holds null. */
  readonly values: Float64Array;
}

/** Registered sources by name; an unreadable or missing directory has none. */
export function listFloatSources(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const file of names) {
    const ext = EXTENSIONS.find((e) => file.toLowerCase().endsWith(e));
    if (!ext) continue;
    const name = file.slice(0, file.length - ext.length);
    if (name !== '' && !out.has(name)) out.set(name, path.join(dir, file));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Synchronous bridge to the DuckDB worker

type Request = { kind: 'describe'; path: string } | { kind: 'read'; path: string; timeColumn: string; column: string };
type Reply = { ok: true; value: unknown } | { ok: false; message: string };

const READ_TIMEOUT_MS = 60_000;
let worker: Worker | undefined;

function duckdbWorker(): Worker {
  if (!worker) {
    worker = new Worker(new URL('./reader-worker.mjs', import.meta.url));
    worker.unref();
    worker.on('error', () => {
      worker = undefined;
    });
    worker.on('exit', () => {
      worker = undefined;
    });
  }
  return worker;
}

function callSync(request: Request): unknown {
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  try {
    duckdbWorker().postMessage({ signal, port: port2, request }, [port2]);
    if (Atomics.wait(signal, 0, 0, READ_TIMEOUT_MS) === 'timed-out') throw new Error(`reading ${request.path} took longer than ${READ_TIMEOUT_MS / 1000} s`);
    const message = receiveMessageOnPort(port1)?.message as Reply | undefined;
    if (!message) throw new Error(`no answer from the DuckDB reader for ${request.path}`);
    if (!message.ok) throw new Error(message.message);
    return message.value;
  } finally {
    port1.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Cached reads

const versionOf = (file: string): string => {
  const st = fs.statSync(file);
  return `${st.size}:${st.mtimeMs}`;
};

const described = new Map<string, { version: string; source: FloatSource }>();
const read = new Map<string, { version: string; series: FloatSeries }>();

/** Columns of a registered file; throws when DuckDB cannot read it. */
export function describeFloatSource(name: string, file: string): FloatSource {
  const version = versionOf(file);
  const hit = described.get(file);
  if (hit && hit.version === version) return hit.source;
  const columns = callSync({ kind: 'describe', path: file }) as { name: string; type: string }[];
  const temporal = columns.filter((c) => TEMPORAL.test(c.type));
  const timeColumn =
    temporal.find((c) => TIME_NAMES.has(c.name.toLowerCase()))?.name ?? (columns[0] && TEMPORAL.test(columns[0].type) ? columns[0].name : null);
  const source: FloatSource = {
    name,
    path: file,
    timeColumn,
    columns,
    numericColumns: columns.filter((c) => c.name !== timeColumn && NUMERIC.test(c.type)).map((c) => c.name),
  };
  described.set(file, { version, source });
  return source;
}

/** One numeric column of a source with its times, ascending; rows without a time are left out. */
export function readFloatColumn(source: FloatSource, column: string): FloatSeries {
  if (!source.timeColumn) throw new Error(`data source '${source.name}' has no date or timestamp column`);
  const key = `${source.path}\u0000${column}`;
  const version = versionOf(source.path);
  const hit = read.get(key);
  if (hit && hit.version === version) return hit.series;
  const series = callSync({ kind: 'read', path: source.path, timeColumn: source.timeColumn, column }) as FloatSeries;
  for (let i = 1; i < series.times.length; i++) {
    if (series.times[i] === series.times[i - 1]) throw new Error(`data source '${source.name}' has two rows for ${new Date(series.times[i]).toISOString()}`);
  }
  read.set(key, { version, series });
  return series;
}
