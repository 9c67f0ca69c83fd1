/**
 * Reference forecasts from the peers the accuracy benchmark compares with, each fitted in one
 * process of its own over all series: R's forecast package (ets() and auto.arima(), default
 * arguments; test/bench/peers/accuracy.R) and statsforecast (AutoETS, AutoARIMA, AutoTheta, AutoCES, MSTL;
 * test/bench/peers/statsforecast-accuracy.py, in a virtual environment the benchmark installs).
 * Both speak one line protocol, described in the R script.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { M4Series } from '../../datasets/m4.ts';

export interface Peer {
  /** Short name, also the prefix of its methods' labels. */
  readonly name: string;
  readonly methods: readonly string[];
  readonly script: string;
  /** The interpreter and its version string, or null with why it is not available. */
  readonly locate: () => { command: string; version: string } | { unavailable: string };
}

/** One peer fit on one series: either a forecast with its time, or the error the peer raised. */
export type PeerResult =
  | { readonly ok: true; readonly seconds: number; readonly cpuSeconds?: number; readonly mean: Float64Array; readonly quantiles: Float64Array[] }
  | { readonly ok: false; readonly error: string; readonly seconds?: number; readonly cpuSeconds?: number };

/** Per method, per series id. */
export type PeerResults = Record<string, Map<string, PeerResult>>;

/** Single-threaded numerics on the peer's side, so per-series times compare with ours. */
const SINGLE_THREAD_ENV = { OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1', BLIS_NUM_THREADS: '1', NUMBA_NUM_THREADS: '1' };

/** Installs R's forecast package on first use where it can (a benchmark tool only); false when R stays unavailable. */
export function ensureRForecast(): boolean {
  const ensured = spawnSync('bash', [new URL('../../scripts/ensure-r-forecast.sh', import.meta.url).pathname], { stdio: ['ignore', 'ignore', 'inherit'] });
  return ensured.status === 0;
}

export const R_PEER: Peer = {
  name: 'R',
  methods: ['ets', 'auto.arima'],
  script: new URL('./peers/accuracy.R', import.meta.url).pathname,
  locate: () => {
    if (!ensureRForecast()) return { unavailable: 'Rscript cannot load the forecast package (scripts/ensure-r-forecast.sh)' };
    const r = spawnSync(
      'Rscript',
      ['-e', 'suppressPackageStartupMessages(library(forecast)); cat(as.character(packageVersion("forecast")), R.version$major, R.version$minor)'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    if (r.error || r.status !== 0) return { unavailable: 'Rscript cannot load the forecast package' };
    const [pkg, major, minor] = r.stdout.trim().split(/\s+/);
    return { command: 'Rscript', version: `forecast ${pkg}, R ${major}.${minor}` };
  },
};

export const STATSFORECAST_PEER: Peer = {
  name: 'statsforecast',
  methods: ['AutoETS', 'AutoARIMA', 'AutoTheta', 'AutoCES', 'MSTL'],
  script: new URL('./peers/statsforecast-accuracy.py', import.meta.url).pathname,
  locate: () => {
    // Installs it into its own cached virtual environment on first use (a benchmark tool only).
    const ensured = spawnSync('bash', [new URL('../../scripts/ensure-statsforecast.sh', import.meta.url).pathname], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (ensured.status !== 0) return { unavailable: 'its virtual environment could not be installed (scripts/ensure-statsforecast.sh)' };
    const python = ensured.stdout.trim();
    const v = spawnSync(python, ['-c', 'import statsforecast, sys; print(statsforecast.__version__, sys.version.split()[0])'], { encoding: 'utf8' });
    if (v.status !== 0) return { unavailable: `${python} cannot import statsforecast` };
    const [pkg, py] = v.stdout.trim().split(/\s+/);
    return { command: python, version: `statsforecast ${pkg}, Python ${py}` };
  },
};

export const PEERS = [R_PEER, STATSFORECAST_PEER] as const;

/** The label of a peer's method in tables: "R ets", "statsforecast AutoTheta". */
export const peerLabel = (peer: Peer, method: string) => `${peer.name} ${method}`;

function parseNumbers(text: string): Float64Array {
  return Float64Array.from(text.split(','), Number);
}

const emptyResults = (peer: Peer): PeerResults => Object.fromEntries(peer.methods.map((m) => [m, new Map<string, PeerResult>()]));

function parseOutput(peer: Peer, text: string, levels: readonly number[]): PeerResults {
  const results = emptyResults(peer);
  // Collect by (method, id) first: time, mean, quantiles arrive on separate lines.
  const partial = new Map<
    string,
    { method: string; id: string; seconds?: number; cpuSeconds?: number; mean?: Float64Array; q: (Float64Array | undefined)[]; error?: string }
  >();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [id, method, field, value = ''] = line.split('\t');
    if (!peer.methods.includes(method)) throw new Error(`${peer.name} output: unknown method in "${line.slice(0, 80)}"`);
    const key = `${method}\u0000${id}`;
    let p = partial.get(key);
    if (!p) {
      p = { method, id, q: levels.map(() => undefined) };
      partial.set(key, p);
    }
    if (field === 'time') p.seconds = Number(value);
    else if (field === 'cpu') p.cpuSeconds = Number(value);
    else if (field === 'error') p.error = value;
    else if (field === 'mean') p.mean = parseNumbers(value);
    else if (field.startsWith('q')) {
      const tau = Number(field.slice(1));
      const k = levels.findIndex((l) => Math.abs(l - tau) < 1e-9);
      if (k < 0) throw new Error(`${peer.name} output: unexpected quantile level ${field}`);
      p.q[k] = parseNumbers(value);
    } else throw new Error(`${peer.name} output: unknown field "${field}"`);
  }
  for (const p of partial.values()) {
    let r: PeerResult;
    if (p.error !== undefined) r = { ok: false, error: p.error, seconds: p.seconds, cpuSeconds: p.cpuSeconds };
    else if (p.seconds === undefined || p.mean === undefined || p.q.some((q) => q === undefined)) r = { ok: false, error: `incomplete ${peer.name} output` };
    else r = { ok: true, seconds: p.seconds, cpuSeconds: p.cpuSeconds, mean: p.mean, quantiles: p.q as Float64Array[] };
    results[p.method].set(p.id, r);
  }
  return results;
}

function serialize(results: PeerResults): string {
  const plain: Record<string, Record<string, unknown>> = {};
  for (const m of Object.keys(results)) {
    plain[m] = {};
    for (const [id, r] of results[m]) {
      plain[m][id] = r.ok
        ? { ok: true, seconds: r.seconds, cpuSeconds: r.cpuSeconds, mean: Array.from(r.mean), quantiles: r.quantiles.map((q) => Array.from(q)) }
        : r;
    }
  }
  return JSON.stringify(plain);
}

function deserialize(peer: Peer, text: string): PeerResults {
  const plain = JSON.parse(text) as Record<
    string,
    Record<string, { ok: boolean; seconds?: number; cpuSeconds?: number; mean?: number[]; quantiles?: number[][]; error?: string }>
  >;
  const results = emptyResults(peer);
  for (const m of peer.methods) {
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

export interface PeerRunOptions {
  /** Label of the progress lines on stderr. */
  readonly label: string;
  /** Directory to keep results in and reuse them from (keyed by the exact input), or undefined. */
  readonly cacheDir?: string;
  /** The peer's interpreter and version (from `locate`; the version is part of the cache key). */
  readonly command: string;
  readonly version: string;
  /** The methods to fit (those compared with a model of the run); all of the peer's by default. */
  readonly methods?: readonly string[];
}

/**
 * Fits the peer's methods on every series (season length = the series' frequency) and returns
 * their forecasts at the given quantile levels. Progress goes to stderr.
 */
export async function runPeerReference(
  peer: Peer,
  series: readonly M4Series[],
  levels: readonly number[],
  opts: PeerRunOptions,
): Promise<{ results: PeerResults; cached: boolean }> {
  const methods = opts.methods ?? peer.methods;
  const input = series.map((s) => [s.id, s.seasonLength, s.horizon, ...Array.from(s.train, (v) => String(v))].join(',')).join('\n') + '\n';
  const key = createHash('sha256')
    .update(opts.version)
    .update('\n')
    .update(levels.join(','))
    .update('\n')
    .update(methods.join(','))
    .update('\n')
    .update(readFileSync(peer.script))
    .update(input)
    .digest('hex')
    .slice(0, 16);
  const cacheFile = opts.cacheDir ? join(opts.cacheDir, `${peer.name}-reference-${opts.label.replace(/[^A-Za-z0-9_-]+/g, '_')}-${key}.json`) : undefined;
  if (cacheFile && existsSync(cacheFile)) {
    return { results: deserialize(peer, readFileSync(cacheFile, 'utf8')), cached: true };
  }

  const dir = mkdtempSync(join(tmpdir(), 'bench-peer-'));
  try {
    const inFile = join(dir, 'series.csv');
    const outFile = join(dir, 'forecasts.tsv');
    writeFileSync(inFile, input);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(opts.command, [peer.script, inFile, outFile, levels.join(','), opts.label, methods.join(',')], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, ...SINGLE_THREAD_ENV },
      });
      // Interrupted (Ctrl-C, kill): stop the peer and remove the temporary files before leaving.
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
        else reject(new Error(`${opts.command} exited with ${signal ?? `code ${code}`}`));
      });
    });
    const results = parseOutput(peer, readFileSync(outFile, 'utf8'), levels);
    for (const m of methods) {
      for (const s of series) if (!results[m].has(s.id)) results[m].set(s.id, { ok: false, error: `missing from ${peer.name} output` });
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
