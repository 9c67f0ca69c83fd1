/**
 * Accuracy benchmark on M4 Hourly and Weekly (datasets/): each model is fitted on every
 * series' train part, forecasts the M4 horizon, and is scored against the test part.
 *
 *   npm run bench -- accuracy [--dataset hourly|weekly|all] [--models naive,seasonal-naive,aets,aarima,svc-global]
 *                             [--limit N] [--every K] [--no-r] [--r-cache DIR] [--json FILE]
 *
 * Scores per dataset and model: mean sMAPE (%) and mean MASE (M4 definitions, test/bench/m4-scores.ts),
 * mean CRPS (engine/metrics.ts `crps` on a fixed grid of quantile levels), and the wall-clock
 * (and CPU) time of fit + forecast per series (single thread). A model that throws, or returns a
 * non-finite or mis-sized forecast, on a series is counted and that series is scored with
 * seasonal naive at the file's freq, so the means stay over the same series. Where R's forecast package is installed,
 * ets() and auto.arima() are fitted on the same series in one Rscript process, and our aets and
 * aarima are compared with them.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { crps } from '../../engine/metrics.ts';
import { naive, seasonalNaive, seasonalNaiveModel } from '../../models/naive.ts';
import type { ForecastOutput, ForecastTask, GlobalModel, LocalModel } from '../../models/types.ts';
import { loadM4, M4_NAMES, type M4Name, type M4Series } from '../../datasets/m4.ts';
import { mase, smape } from './m4-scores.ts';
import { R_METHODS, rForecastVersion, runRReference, type RMethod, type RResults } from './r-reference.ts';

/** Quantile levels every model is asked for and CRPS is computed on: 0.05, 0.10, ..., 0.95. */
export const QUANTILE_GRID: readonly number[] = Array.from({ length: 19 }, (_, i) => Math.round((i + 1) * 5) / 100);

/** Targets of our models against R's. */
const TARGET_MASE_RATIO = 1.02;
const TARGET_TIME_RATIO = 0.5;

// ---------------------------------------------------------------------------------------------
// Models

type Loaded = { readonly model: LocalModel } | { readonly global: GlobalModel } | { readonly unavailable: string };

interface ModelSpec {
  /** Season length handed to the model for a series. */
  readonly seasonLength: (s: M4Series) => number;
  readonly load: () => Promise<Loaded>;
  /** R method this model is measured against, if any. */
  readonly rPeer?: RMethod;
}

/**
 * Imports a model module that may not exist yet. The specifier is computed so the typecheck does
 * not depend on the file being there.
 */
async function loadOptional(file: string, exportName: string): Promise<Loaded> {
  const url = new URL(`../../models/${file}`, import.meta.url);
  if (!existsSync(url)) return { unavailable: 'not available yet' };
  try {
    const mod = (await import(url.href)) as Record<string, unknown>;
    const m = mod[exportName] as Partial<LocalModel> | undefined;
    if (!m || typeof m.forecast !== 'function') return { unavailable: `not available yet (models/${file} has no export "${exportName}")` };
    return { model: m as LocalModel };
  } catch (e) {
    return { unavailable: `failed to load models/${file}: ${(e as Error).message}` };
  }
}

const MODELS: Record<string, ModelSpec> = {
  naive: { seasonLength: () => 1, load: async () => ({ model: naive }) },
  'seasonal-naive': { seasonLength: (s) => s.seasonLength, load: async () => ({ model: seasonalNaiveModel }) },
  aets: { seasonLength: (s) => s.seasonLength, load: () => loadOptional('aets.ts', 'aets'), rPeer: 'ets' },
  aarima: { seasonLength: (s) => s.seasonLength, load: () => loadOptional('aarima.ts', 'aarima'), rPeer: 'auto.arima' },
  // The global model: one fit across all series of the set (runGlobal).
  'svc-global': { seasonLength: (s) => s.seasonLength, load: async () => ({ global: (await import('../../models/svc-global/index.ts')).svcGlobal }) },
};

/** svc-global's targets: MASE at or below aets's, and a whole M4 set fitted and forecast in this many seconds. */
const GLOBAL_TARGET_SECONDS = 60;

const R_LABEL: Record<RMethod, string> = { ets: 'R ets', 'auto.arima': 'R auto.arima' };

// ---------------------------------------------------------------------------------------------
// Scoring

interface SeriesScore {
  readonly smape: number;
  /** Null when the series' MASE scale is zero. */
  readonly mase: number | null;
  readonly crps: number;
}

/** Why an output cannot be scored, or null when it can. */
function invalidOutput(out: ForecastOutput | undefined, h: number, k: number): string | null {
  if (!out || !(out.mean instanceof Float64Array || Array.isArray(out.mean))) return 'no mean';
  if (out.mean.length !== h) return `mean has ${out.mean.length} steps, expected ${h}`;
  if (!out.mean.every(Number.isFinite)) return 'non-finite mean';
  if (!Array.isArray(out.quantiles) || out.quantiles.length !== k) return `expected ${k} quantile arrays`;
  for (const q of out.quantiles) {
    if (!q || q.length !== h || !q.every(Number.isFinite)) return 'non-finite or mis-sized quantiles';
  }
  return null;
}

function score(s: M4Series, out: ForecastOutput): SeriesScore {
  const c = crps(s.test, QUANTILE_GRID, out.quantiles);
  if (c === null) throw new Error(`CRPS undefined for ${s.id}`);
  return { smape: smape(s.test, out.mean), mase: mase(s.train, s.test, out.mean, s.seasonLength), crps: c };
}

/** Seasonal naive at the file's freq: the stand-in for a series a model failed on. */
function fallbackScore(s: M4Series, cache: Map<string, SeriesScore>): SeriesScore {
  let sc = cache.get(s.id);
  if (!sc) {
    const task: ForecastTask = { history: s.train, horizon: s.horizon, quantiles: QUANTILE_GRID, seasonLength: s.seasonLength };
    sc = score(s, seasonalNaive(task, s.seasonLength));
    cache.set(s.id, sc);
  }
  return sc;
}

interface Summary {
  readonly label: string;
  readonly series: number;
  readonly failed: number;
  readonly firstErrors: string[];
  readonly smape: number;
  readonly mase: number;
  /** Series left out of the MASE mean because their scale is zero. */
  readonly maseUndefined: number;
  readonly crps: number;
  /** Mean and median of fit + forecast wall time per series, milliseconds. */
  readonly msMean: number;
  readonly msMedian: number;
  /** Mean CPU time (user + system) of fit + forecast per series, milliseconds. */
  readonly cpuMsMean: number;
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function summarize(label: string, scores: SeriesScore[], ms: number[], cpuMs: number[], errors: string[]): Summary {
  const maseValues = scores.map((s) => s.mase).filter((m): m is number => m !== null);
  return {
    label,
    series: scores.length,
    failed: errors.length,
    firstErrors: errors.slice(0, 3),
    smape: mean(scores.map((s) => s.smape)),
    mase: mean(maseValues),
    maseUndefined: scores.length - maseValues.length,
    crps: mean(scores.map((s) => s.crps)),
    msMean: mean(ms),
    msMedian: median(ms),
    cpuMsMean: mean(cpuMs),
  };
}

// ---------------------------------------------------------------------------------------------
// Running

function progress(label: string): (done: number, total: number) => void {
  const start = Date.now();
  let last = start;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 2000) return;
    last = now;
    process.stderr.write(`[${label}] ${done}/${total} series, ${((now - start) / 1000).toFixed(1)}s\n`);
  };
}

function runModel(label: string, model: LocalModel, spec: ModelSpec, series: readonly M4Series[], fallback: Map<string, SeriesScore>): Summary {
  const scores: SeriesScore[] = [];
  const ms: number[] = [];
  const cpuMs: number[] = [];
  const errors: string[] = [];
  const tick = progress(label);
  for (let i = 0; i < series.length; i++) {
    const s = series[i];
    const task: ForecastTask = { history: s.train, horizon: s.horizon, quantiles: QUANTILE_GRID, seasonLength: spec.seasonLength(s) };
    let out: ForecastOutput | undefined;
    let error: string | null = null;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    try {
      out = model.forecast(task);
    } catch (e) {
      error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    }
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const dc = process.cpuUsage(c0);
    cpuMs.push((dc.user + dc.system) / 1000);
    error ??= invalidOutput(out, s.horizon, QUANTILE_GRID.length);
    if (error !== null) {
      errors.push(`${s.id}: ${error}`);
      scores.push(fallbackScore(s, fallback));
    } else {
      scores.push(score(s, out!));
    }
    tick(i + 1, series.length);
  }
  return summarize(label, scores, ms, cpuMs, errors);
}

/**
 * A global model fits all series at once: one call, whose wall and CPU time are shared out
 * evenly per series. M4 series share no calendar (the file's `ds` is synthetic), so every series
 * gets an index ending at the same instant: the model may learn from every series' whole history,
 * as the M4 global methods did, and trains one model.
 */
async function runGlobal(
  label: string,
  model: GlobalModel,
  spec: ModelSpec,
  series: readonly M4Series[],
  fallback: Map<string, SeriesScore>,
): Promise<Summary & { seconds: number; cpuSeconds: number }> {
  const end = Date.UTC(2020, 0, 6);
  const stepMs = series[0].seasonLength === 24 ? 3_600_000 : 7 * 86_400_000;
  const tasks: ForecastTask[] = series.map((s, i) => ({
    history: s.train,
    horizon: s.horizon,
    quantiles: QUANTILE_GRID,
    seasonLength: spec.seasonLength(s),
    seriesIndex: i,
    times: Float64Array.from({ length: s.train.length + s.horizon }, (_, k) => end - (s.train.length - 1 - k) * stepMs),
  }));
  process.stderr.write(`[${label}] fitting one model on ${series.length} series...\n`);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let outputs: ForecastOutput[] | undefined;
  let failure: string | null = null;
  try {
    outputs = await model.forecastBatch(tasks, []);
  } catch (e) {
    failure = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const dc = process.cpuUsage(c0);
  const cpuSeconds = (dc.user + dc.system) / 1e6;
  const scores: SeriesScore[] = [];
  const errors: string[] = [];
  series.forEach((s, i) => {
    const error = failure ?? invalidOutput(outputs?.[i], s.horizon, QUANTILE_GRID.length);
    if (error !== null) {
      errors.push(`${s.id}: ${error}`);
      scores.push(fallbackScore(s, fallback));
    } else scores.push(score(s, outputs![i]));
  });
  const perSeries = series.map(() => (seconds * 1000) / series.length);
  const cpuPerSeries = series.map(() => (cpuSeconds * 1000) / series.length);
  return { ...summarize(label, scores, perSeries, cpuPerSeries, errors), seconds, cpuSeconds };
}

function summarizeR(method: RMethod, results: RResults, series: readonly M4Series[], fallback: Map<string, SeriesScore>): Summary {
  const scores: SeriesScore[] = [];
  const ms: number[] = [];
  const cpuMs: number[] = [];
  const errors: string[] = [];
  for (const s of series) {
    const r = results[method].get(s.id);
    let error: string | null = null;
    if (!r) error = 'missing from R output';
    else if (!r.ok) error = r.error;
    else error = invalidOutput(r, s.horizon, QUANTILE_GRID.length);
    if (r?.seconds !== undefined) ms.push(r.seconds * 1000);
    if (r?.cpuSeconds !== undefined) cpuMs.push(r.cpuSeconds * 1000);
    if (error !== null) {
      errors.push(`${s.id}: ${error}`);
      scores.push(fallbackScore(s, fallback));
    } else if (r?.ok) {
      scores.push(score(s, r));
    }
  }
  return summarize(R_LABEL[method], scores, ms, cpuMs, errors);
}

// ---------------------------------------------------------------------------------------------
// Output

function ordinal(k: number): string {
  const tens = k % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][k % 10] ?? 'th');
  return `${k}${suffix}`;
}

function fmt(x: number, digits: number): string {
  return Number.isFinite(x) ? x.toFixed(digits) : '-';
}

function fmtMs(x: number): string {
  if (!Number.isFinite(x)) return '-';
  if (x < 1) return x.toFixed(3);
  if (x < 100) return x.toFixed(2);
  return x.toFixed(0);
}

function fmtCrps(x: number): string {
  if (!Number.isFinite(x)) return '-';
  return Math.abs(x) >= 1000 ? x.toFixed(1) : x.toPrecision(5);
}

/**
 * Plain-text table, first column(s) left-aligned, the rest right-aligned. A row shorter than the
 * header is a note: its last cell runs on freely instead of widening its column.
 */
function table(header: string[], rows: string[][], leftColumns = 1): string {
  const full = (r: string[]) => r.length === header.length;
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (full(r) || i < r.length - 1 ? (r[i] ?? '').length : 0))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (!full(cells) && i === cells.length - 1 ? c : i < leftColumns ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function scoreRow(s: Summary): string[] {
  const failed = s.failed > 0 ? `${s.failed}*` : '0';
  const maseCell = fmt(s.mase, 3) + (s.maseUndefined > 0 ? ` (${s.maseUndefined} undef.)` : '');
  return [s.label, String(s.series), failed, fmt(s.smape, 3), maseCell, fmtCrps(s.crps), fmtMs(s.msMean), fmtMs(s.msMedian), fmtMs(s.cpuMsMean)];
}

function ratioRow(ours: string, peer: string, mine: Summary | string | undefined, ref: Summary | undefined): string[] {
  if (typeof mine === 'string') return [`${ours} / ${peer}`, mine];
  if (!mine) return [`${ours} / ${peer}`, 'not run (not in --models)'];
  if (!ref) return [`${ours} / ${peer}`, 'no R reference (--no-r or R unavailable)'];
  const maseRatio = mine.mase / ref.mase;
  const timeRatio = mine.msMean / ref.msMean;
  const verdict = (x: number, target: number) => `${fmt(x, 3)} ${x <= target ? 'PASS' : 'FAIL'}`;
  return [
    `${ours} / ${peer}`,
    verdict(maseRatio, TARGET_MASE_RATIO),
    verdict(timeRatio, TARGET_TIME_RATIO),
    fmt(mine.smape / ref.smape, 3),
    fmt(mine.crps / ref.crps, 3),
    fmt(mine.cpuMsMean / ref.cpuMsMean, 3),
    fmt(ref.msMean / mine.msMean, 1) + 'x',
  ];
}

// ---------------------------------------------------------------------------------------------
// Entry point

const USAGE = `usage: npm run bench -- accuracy [options]
  --dataset hourly|weekly|all   M4 set(s) to run (default all)
  --models LIST                 comma-separated, from ${Object.keys(MODELS).join(', ')} (default all)
  --limit N                     first N series of each set (after --every)
  --every K                     every K-th series of each set (1st, (K+1)th, ...), a spread-out subset
  --no-r                        skip the R reference (ets, auto.arima)
  --r-cache DIR                 keep R's forecasts in DIR and reuse them when the same series are run again
  --json FILE                   also write the summaries as JSON`;

export async function run(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        dataset: { type: 'string', default: 'all' },
        models: { type: 'string', default: Object.keys(MODELS).join(',') },
        limit: { type: 'string' },
        every: { type: 'string' },
        'no-r': { type: 'boolean', default: false },
        'r-cache': { type: 'string' },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (e) {
    console.error(`${(e as Error).message}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const { values } = parsed;
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const usageError = (msg: string): void => {
    console.error(`${msg}\n${USAGE}`);
    process.exitCode = 2;
  };
  const datasets: M4Name[] = values.dataset === 'all' ? [...M4_NAMES] : [values.dataset as M4Name];
  const badDataset = datasets.find((d) => !M4_NAMES.includes(d));
  if (badDataset !== undefined) return usageError(`unknown --dataset "${badDataset}"`);
  const modelKeys = values.models
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  const badModel = modelKeys.find((m) => !(m in MODELS));
  if (badModel !== undefined || modelKeys.length === 0) return usageError(`unknown model "${badModel ?? ''}"`);
  const positiveInt = (v: string | undefined): number | null | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    return Number.isInteger(n) && n >= 1 ? n : null;
  };
  const limit = positiveInt(values.limit);
  const every = positiveInt(values.every);
  if (limit === null) return usageError(`--limit needs a positive integer, got "${values.limit}"`);
  if (every === null) return usageError(`--every needs a positive integer, got "${values.every}"`);

  const rVersion = values['no-r'] ? null : rForecastVersion();
  const cpu = cpus();
  const date = new Date().toISOString();
  console.log(`# M4 accuracy benchmark, ${date}`);
  console.log(
    `machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; Node ${process.version}, single thread`,
  );
  console.log(`R reference: ${values['no-r'] ? 'skipped (--no-r)' : (rVersion ?? 'not available (Rscript cannot load the forecast package)')}`);
  console.log(
    `CRPS: quantile approximation (engine/metrics.ts crps) on the fixed grid of ${QUANTILE_GRID.length} levels ${QUANTILE_GRID[0]}, ${QUANTILE_GRID[1]}, ..., ${QUANTILE_GRID[QUANTILE_GRID.length - 1]}; in the data's units, so its mean is dominated by the large-valued series.`,
  );
  console.log(
    "sMAPE (%) and MASE: M4 definitions; MASE scaled by the in-sample seasonal naive MAE at the file's freq (lag 1 when train is not longer than freq).",
  );
  console.log(
    'time: wall clock of fit + forecast per series (mean and median, ms; the time target uses the mean), one thread on each side; CPU ms (user + system) shown too, as wall clock inflates when the machine is busy.',
  );
  console.log(
    `load average at start: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}`,
  );

  // Load models once (the optional ones may be missing).
  const loaded = new Map<string, Loaded>();
  for (const key of modelKeys) loaded.set(key, await MODELS[key].load());

  const report: Record<string, unknown> = {
    date,
    node: process.version,
    cpu: cpu[0]?.model,
    cores: cpu.length,
    r: rVersion,
    quantiles: QUANTILE_GRID,
    datasets: {},
  };

  for (const name of datasets) {
    let series = await loadM4(name);
    const total = series.length;
    if (every !== undefined) series = series.filter((_, i) => i % every === 0);
    if (limit !== undefined) series = series.slice(0, limit);
    const s0 = series[0];
    const subset =
      series.length === total
        ? 'all series'
        : `subset${every ? `: every ${ordinal(every)} series` : ''}${limit ? `${every ? ', then' : ':'} first ${limit}` : ''} (${series
            .map((s) => s.id)
            .slice(0, 3)
            .join(', ')}${series.length > 3 ? ', ...' : ''})`;
    const fallback = new Map<string, SeriesScore>();

    const summaries: Summary[] = [];
    const unavailable = new Map<string, string>();
    const globalTimes = new Map<string, { seconds: number; cpuSeconds: number }>();
    for (const key of modelKeys) {
      const l = loaded.get(key)!;
      if ('unavailable' in l) {
        unavailable.set(key, l.unavailable);
        continue;
      }
      if ('global' in l) {
        const g = await runGlobal(`${name} ${key}`, l.global, MODELS[key], series, fallback);
        summaries.push(g);
        globalTimes.set(key, g);
        continue;
      }
      summaries.push(runModel(`${name} ${key}`, l.model, MODELS[key], series, fallback));
    }
    // Our labels without the dataset prefix used in progress lines.
    const ours = summaries.map((s) => ({ ...s, label: s.label.slice(name.length + 1) }));

    let rSummaries: Summary[] = [];
    let rNote = '';
    if (rVersion) {
      process.stderr.write(`[R ${name}] fitting ets() and auto.arima() on ${series.length} series in one Rscript process...\n`);
      const t0 = Date.now();
      const { results, cached } = await runRReference(series, QUANTILE_GRID, { label: `R ${name}`, cacheDir: values['r-cache'], version: rVersion });
      rNote = cached ? ' (R results reused from --r-cache)' : ` (R run took ${((Date.now() - t0) / 1000).toFixed(0)}s)`;
      rSummaries = R_METHODS.map((m) => summarizeR(m, results, series, fallback));
    }

    console.log(
      `\n## M4 ${name}: ${series.length} of ${total} series, ${subset}; horizon ${s0.horizon}, freq ${s0.seasonLength}${rNote}; load average now ${loadavg()
        .map((x) => x.toFixed(2))
        .join(', ')}\n`,
    );
    const rows = [...ours.map(scoreRow), ...[...unavailable].map(([k, why]) => [k, String(series.length), '-', why]), ...rSummaries.map(scoreRow)];
    console.log(table(['model', 'series', 'failed', 'sMAPE %', 'MASE', 'CRPS', 'ms/series', 'median ms', 'CPU ms/series'], rows));

    for (const [key, t] of globalTimes) {
      const mine = ours.find((s) => s.label === key)!;
      const peer = ours.find((s) => s.label === 'aets');
      const ratio = peer ? mine.mase / peer.mase : NaN;
      const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
      console.log(
        `\n${key}: one fit on ${series.length} series in ${t.seconds.toFixed(1)} s wall (${t.cpuSeconds.toFixed(1)} s CPU; target < ${GLOBAL_TARGET_SECONDS} s ${verdict(t.seconds < GLOBAL_TARGET_SECONDS)}); ` +
          (peer ? `MASE / aets MASE = ${fmt(ratio, 3)} (target <= 1 ${verdict(ratio <= 1)})` : 'aets not run (add it to --models to compare)'),
      );
    }
    const failedAll = [...ours, ...rSummaries].filter((s) => s.failed > 0);
    if (failedAll.length > 0) {
      console.log(
        '\n* series a model failed on (threw or gave a non-finite / mis-sized forecast) are scored with seasonal naive at freq, so means stay comparable:',
      );
      for (const s of failedAll) {
        console.log(`  ${s.label}: ${s.failed} failed, e.g. ${s.firstErrors.join(' | ').slice(0, 300)}`);
      }
    }

    if (modelKeys.some((k) => MODELS[k].rPeer) || rSummaries.length > 0) {
      const ratioRows: string[][] = [];
      for (const [key, spec] of Object.entries(MODELS)) {
        if (!spec.rPeer) continue;
        const mine = unavailable.get(key) ?? ours.find((s) => s.label === key);
        const ref = rSummaries.find((s) => s.label === R_LABEL[spec.rPeer!]);
        ratioRows.push(ratioRow(key, spec.rPeer, mine, ref));
      }
      console.log(`\nours / R (targets: MASE ratio <= ${TARGET_MASE_RATIO}, time ratio <= ${TARGET_TIME_RATIO})\n`);
      console.log(table(['pair', 'MASE ratio', 'time ratio', 'sMAPE ratio', 'CRPS ratio', 'CPU time ratio', 'speed-up'], ratioRows));
    }

    (report.datasets as Record<string, unknown>)[name] = {
      series: series.length,
      total,
      subset,
      ids: series.map((s) => s.id),
      ours,
      unavailable: Object.fromEntries(unavailable),
      r: rSummaries,
    };
  }

  if (values.json) {
    writeFileSync(values.json, JSON.stringify(report, null, 2) + '\n');
    console.log(`\nsummaries written to ${values.json}`);
  }
}
