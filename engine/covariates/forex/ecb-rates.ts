/**
 * Loader for the European Central Bank's euro foreign exchange reference rates shipped in this
 * folder (`ecb-eurofxref-hist.csv.gz`, the ECB's own "eurofxref-hist" download; see README.md beside
 * it): one row per TARGET business day, newest first, a `Date` column then the units of each
 * currency one euro buys, `N/A` where the ECB published none. Read synchronously once per process
 * and kept: the forecast planner that uses it is synchronous.
 */
import fs from 'node:fs';
import { constants, gunzipSync } from 'node:zlib';

export interface CurrencyRates {
  /** ISO 4217 code, e.g. "USD". */
  readonly code: string;
  /** UTC midnight (epoch ms) of each day with a published rate, ascending. */
  readonly days: Float64Array;
  /** Units of the currency per euro on those days. */
  readonly perEuro: Float64Array;
}

export interface EcbRates {
  /** First and last day of the file (UTC midnight, epoch ms). */
  readonly firstDay: number;
  readonly lastDay: number;
  /** Every currency of the file; the euro itself is not listed (it is 1 per euro). */
  readonly currencies: ReadonlyMap<string, CurrencyRates>;
}

export function ecbPath(): string {
  return new URL('./ecb-eurofxref-hist.csv.gz', import.meta.url).pathname;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Parses the ECB history CSV text; throws on a malformed row rather than skipping it. */
export function parseEcbCsv(text: string, source = 'ECB CSV'): EcbRates {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length < 2) throw new Error(`${source}: no rows`);
  const header = lines[0].split(',').map((h) => h.trim());
  if (header[0] !== 'Date') throw new Error(`${source}: first column is "${header[0]}", expected "Date"`);
  const codes = header.slice(1).filter((c, i, all) => c !== '' || i < all.length - 1);
  for (const c of codes) if (!/^[A-Z]{3}$/.test(c)) throw new Error(`${source}: column "${c}" is not a currency code`);
  const columns = codes.map(() => ({ days: [] as number[], values: [] as number[] }));
  const allDays: number[] = [];
  for (let r = 1; r < lines.length; r++) {
    const fields = lines[r].split(',');
    const m = DAY.exec(fields[0]);
    if (!m) throw new Error(`${source}:${r + 1}: bad date "${fields[0]}"`);
    const day = Date.UTC(+m[1], +m[2] - 1, +m[3]);
    allDays.push(day);
    codes.forEach((_, c) => {
      const raw = (fields[c + 1] ?? '').trim();
      if (raw === 'N/A' || raw === '') return;
      const value = Number(raw);
      if (!Number.isFinite(value) || value <= 0) throw new Error(`${source}:${r + 1}: bad rate "${raw}" for ${codes[c]}`);
      columns[c].days.push(day);
      columns[c].values.push(value);
    });
  }
  const currencies = new Map<string, CurrencyRates>();
  codes.forEach((code, c) => {
    const { days, values } = columns[c];
    if (days.length === 0) return;
    // The file is newest first; keep days ascending.
    const order = days.map((_, i) => i).sort((a, b) => days[a] - days[b]);
    for (let i = 1; i < order.length; i++) {
      if (days[order[i]] === days[order[i - 1]]) throw new Error(`${source}: two rates for ${code} on the same day`);
    }
    currencies.set(code, { code, days: Float64Array.from(order, (i) => days[i]), perEuro: Float64Array.from(order, (i) => values[i]) });
  });
  return { firstDay: Math.min(...allDays), lastDay: Math.max(...allDays), currencies };
}

/**
 * The currencies of the shipped file, from its header line alone (the request schema lists them
 * at start; parsing every rate takes much longer, which only a forex request pays).
 */
export function ecbCurrencyCodes(): string[] {
  const file = fs.openSync(ecbPath(), 'r');
  try {
    const head = Buffer.alloc(4096);
    const read = fs.readSync(file, head, 0, head.length, 0);
    // A partial stream: flushed as far as it goes instead of failing for want of its end.
    const text = gunzipSync(head.subarray(0, read), { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8');
    const header = text.slice(0, text.indexOf('\n'));
    return header
      .split(',')
      .slice(1)
      .map((c) => c.trim())
      .filter((c) => c !== '');
  } finally {
    fs.closeSync(file);
  }
}

let cached: EcbRates | undefined;

/** The shipped ECB history, parsed once per process. */
export function loadEcbRates(): EcbRates {
  cached ??= parseEcbCsv(gunzipSync(fs.readFileSync(ecbPath())).toString('utf8'), ecbPath());
  return cached;
}
