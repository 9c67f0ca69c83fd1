/**
 * Loader for the M4 Hourly and Weekly sets shipped in this folder (see datasets/README.md): long
 * format, one row per (series, step), `unique_id, freq, ds, y, split`. Series are returned in file
 * order; a series whose rows are not contiguous, whose `test` rows come before `train` rows, or whose
 * `ds` does not increase is rejected rather than silently reordered.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';

export type M4Name = 'hourly' | 'weekly';

export interface M4Series {
  /** M4 series id, e.g. "H1" or "W17". */
  readonly id: string;
  /** Seasonal period used by the M4 benchmarks: the file's `freq` column (24 hourly, 52 weekly). */
  readonly seasonLength: number;
  /** M4 forecast horizon: 48 hourly, 13 weekly; equals `test.length`. */
  readonly horizon: number;
  /** History given to forecasters, oldest first. */
  readonly train: Float64Array;
  /** M4 holdout, `horizon` steps following `train`. */
  readonly test: Float64Array;
}

export const M4_HORIZON: Readonly<Record<M4Name, number>> = { hourly: 48, weekly: 13 };

export const M4_NAMES: readonly M4Name[] = ['hourly', 'weekly'];

/** Absolute path of the gzip CSV of one M4 set (inside this repository). */
export function m4Path(name: M4Name): string {
  return new URL(`./m4-${name}.csv.gz`, import.meta.url).pathname;
}

const HEADER = ['unique_id', 'freq', 'ds', 'y', 'split'];

/** Strip one pair of surrounding double quotes (the files quote strings, never embed commas). */
function unquote(field: string): string {
  return field.length >= 2 && field.charCodeAt(0) === 34 && field.charCodeAt(field.length - 1) === 34 ? field.slice(1, -1) : field;
}

interface Building {
  id: string;
  freq: number;
  train: number[];
  test: number[];
  lastDs: string;
}

/** Reads one M4 set, streaming the gzip file line by line. */
export async function loadM4(name: M4Name): Promise<M4Series[]> {
  const horizon = M4_HORIZON[name];
  if (horizon === undefined) throw new Error(`unknown M4 set "${String(name)}"; expected one of ${M4_NAMES.join(', ')}`);
  const path = m4Path(name);
  const lines = createInterface({ input: createReadStream(path).pipe(createGunzip()), crlfDelay: Infinity });

  const out: M4Series[] = [];
  const seen = new Set<string>();
  let cur: Building | null = null;
  let lineNo = 0;

  const fail = (msg: string): never => {
    throw new Error(`${path}:${lineNo}: ${msg}`);
  };
  const finish = (b: Building): void => {
    if (b.test.length !== horizon) fail(`series ${b.id} has ${b.test.length} test rows; expected horizon ${horizon}`);
    if (b.train.length === 0) fail(`series ${b.id} has no train rows`);
    out.push({ id: b.id, seasonLength: b.freq, horizon, train: Float64Array.from(b.train), test: Float64Array.from(b.test) });
  };

  for await (const raw of lines) {
    lineNo++;
    const line = raw.trim();
    if (line === '') continue;
    const fields = line.split(',').map(unquote);
    if (lineNo === 1) {
      if (fields.join(',') !== HEADER.join(',')) fail(`unexpected header "${line}"; expected ${HEADER.join(',')}`);
      continue;
    }
    if (fields.length !== HEADER.length) fail(`expected ${HEADER.length} fields, got ${fields.length}`);
    const [id, freqText, ds, yText, split] = fields;
    const y = Number(yText);
    if (yText === '' || !Number.isFinite(y)) fail(`non-numeric y "${yText}" for series ${id}`);
    const freq = Number(freqText);
    if (!Number.isInteger(freq) || freq < 1) fail(`bad freq "${freqText}" for series ${id}`);

    if (cur === null || cur.id !== id) {
      if (cur !== null) finish(cur);
      if (seen.has(id)) fail(`rows of series ${id} are not contiguous`);
      seen.add(id);
      cur = { id, freq, train: [], test: [], lastDs: '' };
    } else {
      if (freq !== cur.freq) fail(`series ${id} changes freq from ${cur.freq} to ${freq}`);
      // ds is ISO 8601 of a fixed width, so string order is time order.
      if (!(ds > cur.lastDs)) fail(`series ${id}: ds ${ds} does not follow ${cur.lastDs}`);
    }
    cur.lastDs = ds;
    if (split === 'train') {
      if (cur.test.length > 0) fail(`series ${id}: train row after test rows`);
      cur.train.push(y);
    } else if (split === 'test') {
      cur.test.push(y);
    } else {
      fail(`unknown split "${split}"`);
    }
  }
  if (cur !== null) finish(cur);
  if (out.length === 0) throw new Error(`${path}: no series`);
  return out;
}
