/**
 * Reference forecasts from R's forecast package (ets() and auto.arima(), default arguments),
 * fitted in one Rscript process by test/bench/r/accuracy.R.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { M4Series } from '../../datasets/m4.ts';

export const R_METHODS = ['ets', 'auto.arima'] as const;
export type RMethod = (typeof R_METHODS)[number];

/** One R fit on one series: either a forecast with its time, or the error R raised. */
export type RResult =
  | { readonly ok: true; readonly seconds: number; readonly cpuSeconds?: number; readonly mean: Float64Array; readonly quantiles: Float64Array[] }
  | { readonly ok: false; readonly error: string; readonly seconds?: number; readonly cpuSeconds?: number };

/** Per method, per series id. */
export type RResults = Record<RMethod, Map<string, RResult>>;

const SCRIPT = new URL('./r/accuracy.R', import.meta.url).pathname;

/** Single-threaded numerics on the R side, so per-series times compare with ours. */
const SINGLE_THREAD_ENV = { OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1', BLIS_NUM_THREADS: '1' };

/** The forecast package's version when `Rscript` can load it, else null. */
export function rForecastVersion(): string | null {
  const r = spawnSync(
    'Rscript',
    ['-e', 'suppressPackageStartupMessages(library(forecast)); cat(as.character(packageVersion("forecast")), R.version$major, R.version$minor)'],
    {
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  if (r.error || r.status !== 0) return null;
  const [pkg, major, minor] = r.stdout.trim().split(/\s+/);
  return pkg ? `forecast ${pkg}, R ${major}.${minor}` : null;
}

function parseNumbers(text: string): Float64Array {
  return Float64Array.from(text.split(','), Number);
}

function parseOutput(text: string, levels: readonly number[]): RResults {
  const results: RResults = { ets: new Map(), 'auto.arima': new Map() };
  // Collect by (method, id) first: time, mean, quantiles arrive on separate lines.
  const partial = new Map<
    string,
    { method: RMethod; id: string; seconds?: number; cpuSeconds?: number; mean?: Float64Array; q: (Float64Array | undefined)[]; error?: string }
  >();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [id, method, field, value = ''] = line.split('\t');
    if (!(R_METHODS as readonly string[]).includes(method)) throw new Error(`R output: unknown method in "${line.slice(0, 80)}"`);
    const key = `${method}\u0000${id}`;
    let p = partial.get(key);
    if (!p) {
      p = { method: method as RMethod, id, q: levels.map(() => undefined) };
      partial.set(key, p);
    }
    if (field === 'time') p.seconds = Number(value);
    else if (field === 'cpu') p.cpuSeconds = Number(value);
    else if (field === 'error') p.error = value;
    else if (field === 'mean') p.mean = parseNumbers(value);
    else if (field.startsWith('q')) {
      const tau = Number(field.slice(1));
      const k = levels.findIndex((l) => Math.abs(l - tau) < 1e-9);
      if (k < 0) throw new Error(`R output: unexpected quantile level ${field}`);
      p.q[k] = parseNumbers(value);
    } else throw new Error(`R output: unknown field "${field}"`);
  }
  for (const p of partial.values()) {
    let r: RResult;
    if (p.error !== undefined) r = { ok: false, error: p.error, seconds: p.seconds, cpuSeconds: p.cpuSeconds };
    else if (p.seconds === undefined || p.mean === undefined || p.q.some((q) => q === undefined)) r = { ok: false, error: 'incomplete R output' };
    else r = { ok: true, seconds: p.seconds, cpuSeconds: p.cpuSeconds, mean: p.mean, quantiles: p.q as Float64Array[] };
    results[p.method].set(p.id, r);
  }
  return results;
}

function serialize(results: RResults): string {
  const plain: Record<string, Record<string, unknown>> = {};
  for (const m of R_METHODS) {
    plain[m] = {};
    for (const [id, r] of results[m]) {
      plain[m][id] = r.ok
        ? { ok: true, seconds: r.seconds, cpuSeconds: r.cpuSeconds, mean: Array.from(r.mean), quantiles: r.quantiles.map((q) => Array.from(q)) }
        : r;
    }
  }
  return JSON.stringify(plain);
}

function deserialize(text: string): RResults {
  const plain = JSON.parse(text) as Record<
    RMethod,
    Record<string, { ok: boolean; seconds?: number; cpuSeconds?: number; mean?: number[]; quantiles?: number[][]; error?: string }>
  >;
  const results: RResults = { ets: new Map(), 'auto.arima': new Map() };
  for (const m of R_METHODS) {
    for (const [id, r] of Object.entries(plain[m] ?? {})) {
      results[m].set(
        id,
        r.ok
          ? {
              ok: true,
              seconds: r.seconds!,
              cpuSeconds: r.cpuSeconds,
              mean: Float64Array.from(r.mean!),
              quantiles: r.quantiles!.map((q) => Float64Array.from(q)),
            }
          : { ok: false, error: r.error ?? 'unknown error', seconds: r.seconds, cpuSeconds: r.cpuSeconds },
      );
    }
  }
  return results;
}

export interface RRunOptions {
  /** Label of the progress lines on stderr. */
  readonly label: string;
  /** Directory to keep results in and reuse them from (keyed by the exact input), or undefined. */
  readonly cacheDir?: string;
  /** Version string of R's forecast package (part of the cache key). */
  readonly version: string;
}

/**
 * Fits ets() and auto.arima() on every series (ts with frequency = seasonLength) and returns
 * their forecasts at the given quantile levels. Progress goes to stderr.
 */
export async function runRReference(
  series: readonly M4Series[],
  levels: readonly number[],
  opts: RRunOptions,
): Promise<{ results: RResults; cached: boolean }> {
  const input = series.map((s) => [s.id, s.seasonLength, s.horizon, ...Array.from(s.train, (v) => String(v))].join(',')).join('\n') + '\n';
  const key = createHash('sha256')
    .update(opts.version)
    .update('\n')
    .update(levels.join(','))
    .update('\n')
    .update(readFileSync(SCRIPT))
    .update(input)
    .digest('hex')
    .slice(0, 16);
  const cacheFile = opts.cacheDir ? join(opts.cacheDir, `r-reference-${opts.label.replace(/[^A-Za-z0-9_-]+/g, '_')}-${key}.json`) : undefined;
  if (cacheFile && existsSync(cacheFile)) {
    return { results: deserialize(readFileSync(cacheFile, 'utf8')), cached: true };
  }

  const dir = mkdtempSync(join(tmpdir(), 'bench-r-'));
  try {
    const inFile = join(dir, 'series.csv');
    const outFile = join(dir, 'forecasts.tsv');
    writeFileSync(inFile, input);
    await new Promise<void>((resolve, reject) => {
      const child = spawn('Rscript', [SCRIPT, inFile, outFile, levels.join(','), opts.label], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, ...SINGLE_THREAD_ENV },
      });
      // Interrupted (Ctrl-C, kill): stop R and remove the temporary files before leaving.
      const onSignal = (signal: NodeJS.Signals) => {
        child.kill('SIGTERM');
        rmSync(dir, { recursive: true, force: true });
        process.exit(signal === 'SIGINT' ? 130 : 143);
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const done = () => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      };
      child.on('error', (e) => (done(), reject(e)));
      child.on('exit', (code, signal) => {
        done();
        if (code === 0) resolve();
        else reject(new Error(`Rscript exited with ${signal ?? `code ${code}`}`));
      });
    });
    const results = parseOutput(readFileSync(outFile, 'utf8'), levels);
    for (const m of R_METHODS) {
      for (const s of series) if (!results[m].has(s.id)) results[m].set(s.id, { ok: false, error: 'missing from R output' });
    }
    if (cacheFile) {
      mkdirSync(opts.cacheDir!, { recursive: true });
      writeFileSync(cacheFile, serialize(results));
    }
    return { results, cached: false };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
