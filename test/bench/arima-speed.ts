/**
 * `npm run bench -- arima-speed [--dataset r-seasonal] [--reps 1] [--only id,id...] [--no-r]`
 *
 * CPU time of `aarima` against R's forecast::auto.arima() on short seasonal series, the kind
 * auto.arima is most often run on: `datasets/r-seasonal.csv.gz`, 33 monthly and quarterly series
 * (R's bundled examples and seeded SARIMA simulations; see tools/reference/r-seasonal-set.R), or
 * with `--dataset weekly-monthly` / `weekly-quarterly` the short sets built from M4 Weekly
 * (accuracy/short-sets.ts: 294 monthly series of 58 to 144 points, 286 quarterly ones of 27 to 72),
 * whole (history and holdout), handed to R as a file of the same format.
 *
 * Per series: CPU time (user + system, process.cpuUsage) of one `aarima.forecast` call (fit and
 * forecast, horizon 2 x freq, quantiles 0.1 and 0.9), and in the same run R's `auto.arima(y)` then
 * `forecast(fit, h, level = 80)` in one Rscript process with single-threaded BLAS
 * (test/bench/peers/arima-speed.R). With --reps N each side keeps the least of N runs. Both sides
 * fit the first series once, untimed, before timing (JIT / first-call costs). Prints the ratio
 * ours / R per series and over the total, whether the selected model (orders and constant) is R's,
 * and how far our point forecasts are from R's (largest difference over the series' range).
 * Target: total CPU ours / R <= 0.5.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { loadRSeasonal, R_SEASONAL_PATH, type RSeasonalSeries as Series } from '../../datasets/r-seasonal.ts';
import { aarima } from '../../models/families/arima/aarima.ts';
import { autoArima } from '../../models/families/arima/search.ts';
import { joined, loadShortSet } from './accuracy/short-sets.ts';
import { benchOptions } from './options.ts';
import { ensureRForecast } from './peer-reference.ts';

const USAGE = 'usage: npm run bench -- arima-speed [--dataset r-seasonal|weekly-monthly|weekly-quarterly] [--reps 1] [--only id,id...] [--no-r]';
const R_SCRIPT = new URL('./peers/arima-speed.R', import.meta.url).pathname;
const TARGET = 0.5;
const DATASETS = ['r-seasonal', 'weekly-monthly', 'weekly-quarterly'] as const;

/** The series of a --dataset, and the r-seasonal-format file R reads them from (written to `dir` for a built set). */
async function loadSet(name: (typeof DATASETS)[number], dir: string): Promise<{ set: Series[]; path: string }> {
  if (name === 'r-seasonal') return { set: loadRSeasonal(), path: R_SEASONAL_PATH };
  const set = (await loadShortSet(name)).map((s) => ({ id: s.id, freq: s.seasonLength, y: joined(s) }));
  const path = join(dir, `${name}.csv.gz`);
  const rows = set.flatMap((s) => Array.from(s.y, (v) => `${s.id},${s.freq},${v}`));
  writeFileSync(path, gzipSync(['unique_id,freq,y', ...rows].join('\n') + '\n'));
  return { set, path };
}

interface RResult {
  readonly cpu: number;
  readonly model?: string;
  readonly mean?: Float64Array;
  readonly error?: string;
}

function cpuSeconds(f: () => void): number {
  const t0 = process.cpuUsage();
  f();
  const dt = process.cpuUsage(t0);
  return (dt.user + dt.system) / 1e6;
}

function forecastOurs(s: Series) {
  return aarima.forecast({ history: s.y, horizon: 2 * s.freq, quantiles: [0.1, 0.9], seasonLength: s.freq });
}

/** The selected model as "(p,d,q)(P,D,Q)[m] constant", from a separate (untimed) search. */
function ourModel(s: Series): string {
  const model = autoArima(s.y, { m: s.freq });
  if (model.kind === 'constant') return 'constant';
  const o = model.fit.orders;
  const constant = model.drift ? 'drift' : model.fit.hasIntercept ? 'mean' : 'none';
  return `(${o.p},${o.d},${o.q})(${o.P},${o.D},${o.Q})[${o.m}] ${constant}`;
}

function runR(path: string, reps: number): Map<string, RResult> | string {
  const dir = mkdtempSync(join(tmpdir(), 'arima-speed-'));
  try {
    const output = join(dir, 'r.tsv');
    const env = { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1' };
    const r = spawnSync('Rscript', [R_SCRIPT, path, output, String(reps)], { env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.error || r.status !== 0) return `Rscript failed (${r.error?.message ?? `exit ${r.status}`}); is R with the forecast package installed?`;
    const results = new Map<string, RResult>();
    for (const line of readFileSync(output, 'utf8').split('\n')) {
      if (line === '') continue;
      const f = line.split('\t');
      const cpu = Number(f[1]);
      if (f[3] === 'error') {
        results.set(f[0], { cpu, error: f[4] });
        continue;
      }
      const a = f[3].split(',').map(Number); // p,d,q,P,D,Q,m
      const model = `(${a[0]},${a[1]},${a[2]})(${a[3]},${a[4]},${a[5]})[${a[6]}] ${f[4]}`;
      results.set(f[0], { cpu, model, mean: Float64Array.from(f[5].split(','), Number) });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function range(y: Float64Array): number {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of y) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  return hi - lo;
}

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      dataset: { type: 'string', default: 'r-seasonal' },
      reps: { type: 'string', default: '1' },
      only: { type: 'string' },
      'no-r': { type: 'boolean', default: false },
    },
    USAGE,
  );
  if (!values) return;
  const reps = Number(values.reps);
  const dataset = values.dataset as (typeof DATASETS)[number];
  if (!Number.isInteger(reps) || reps < 1 || !DATASETS.includes(dataset)) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'arima-speed-set-'));
  try {
    await compare(dataset, dir, reps, values.only, values['no-r']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function compare(dataset: (typeof DATASETS)[number], dir: string, reps: number, only: string | undefined, noR: boolean): Promise<void> {
  const loaded = await loadSet(dataset, dir);
  let set = loaded.set;
  if (only) {
    const keep = new Set(only.split(','));
    set = set.filter((s) => keep.has(s.id));
  }
  if (set.length === 0) {
    console.error(`no series of ${dataset} selected`);
    process.exitCode = 2;
    return;
  }

  forecastOurs(set[0]); // warm-up, untimed
  const ours = set.map((s) => {
    let cpu = Infinity;
    let mean: Float64Array | null = null;
    let error: string | undefined;
    for (let r = 0; r < reps; r++) {
      cpu = Math.min(
        cpu,
        cpuSeconds(() => {
          try {
            mean = forecastOurs(s).mean;
          } catch (e) {
            error = (e as Error).message;
          }
        }),
      );
    }
    return { cpu, mean: mean as Float64Array | null, error, model: error ? 'error' : ourModel(s) };
  });

  let peer: Map<string, RResult> | null = null;
  if (!noR) {
    const r = ensureRForecast() ? runR(loaded.path, reps) : 'R with the forecast package could not be installed (scripts/ensure-r-forecast.sh)';
    if (typeof r === 'string') console.error(`R reference skipped: ${r}`);
    else peer = r;
  }

  console.log(`arima-speed: ${set.length} series of ${dataset}, CPU seconds of fit + forecast (h = 2 x freq), least of ${reps} run(s)`);
  console.log(
    `${'series'.padEnd(15)} ${'n'.padStart(4)} ${'m'.padStart(3)} ${'ours'.padStart(8)} ${'R'.padStart(8)} ${'ratio'.padStart(6)}  ${'our model'.padEnd(26)} ${'R model'.padEnd(26)} same  mean diff / range`,
  );
  let oursTotal = 0;
  let rTotal = 0;
  let same = 0;
  let compared = 0;
  set.forEach((s, i) => {
    const o = ours[i];
    oursTotal += o.cpu;
    const r = peer?.get(s.id);
    let rCol = '-';
    let ratio = '-';
    let rModel = '-';
    let match = '-';
    let diff = '-';
    if (r) {
      rTotal += r.cpu;
      rCol = r.cpu.toFixed(3);
      ratio = (o.cpu / r.cpu).toFixed(2);
      rModel = r.model ?? `error: ${r.error}`;
      compared++;
      const ok = r.model !== undefined && r.model === o.model;
      if (ok) same++;
      match = ok ? 'yes' : 'NO';
      if (o.mean && r.mean && o.mean.length === r.mean.length) {
        let d = 0;
        for (let t = 0; t < o.mean.length; t++) d = Math.max(d, Math.abs(o.mean[t] - r.mean[t]));
        diff = (d / range(s.y)).toExponential(1);
      }
    }
    console.log(
      `${s.id.padEnd(15)} ${String(s.y.length).padStart(4)} ${String(s.freq).padStart(3)} ${o.cpu.toFixed(3).padStart(8)} ${rCol.padStart(8)} ${ratio.padStart(6)}  ${(o.error ? `error: ${o.error}` : o.model).padEnd(26)} ${rModel.padEnd(26)} ${match.padEnd(4)}  ${diff}`,
    );
  });
  console.log(`total: ours ${oursTotal.toFixed(2)} s CPU${peer ? `, R ${rTotal.toFixed(2)} s CPU` : ''}`);
  if (peer) {
    const ratio = oursTotal / rTotal;
    console.log(
      `ratio ours / R ${ratio.toFixed(3)} (target <= ${TARGET} ${ratio <= TARGET ? 'PASS' : 'FAIL'}); R's model selected on ${same} of ${compared} series`,
    );
  }
}
