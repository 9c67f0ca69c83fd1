/**
 * Accuracy benchmark on M4 Hourly and Weekly (datasets/): each model is fitted on every
 * series' train part, forecasts the M4 horizon, and is scored against the test part.
 *
 *   npm run bench -- accuracy [--dataset hourly|weekly|all] [--models naive,seasonal-naive,aets,aarima,aarima-exact,theta,ces,mstl,svc-global,ensemble]
 *                             [--limit N] [--every K] [--no-r] [--no-statsforecast] [--r-cache DIR] [--json FILE]
 *
 * Scores per dataset and model: mean sMAPE (%) and mean MASE (M4 definitions, test/bench/m4-scores.ts),
 * mean CRPS (engine/accuracy-metrics.ts `crps` on a fixed grid of quantile levels), and the wall-clock
 * (and CPU) time of fit + forecast per series (single thread), and the share of test points inside
 * the 80% interval. A model that throws, or returns a non-finite or mis-sized forecast, on a
 * series is counted and that series is scored with seasonal naive at the file's freq, so the means
 * stay over the same series. The peers run on the same series in the same run, each in one
 * process (test/bench/peer-reference.ts): R's ets() and auto.arima() where R's forecast package
 * is installed, and statsforecast's AutoETS, AutoARIMA and AutoTheta (installed by the benchmark
 * into a virtual environment of its own); each of our models is compared with its counterparts.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { naive, seasonalNaiveModel } from '../../models/families/naive/naive.ts';
import { modelEntry } from '../../models/contract/model-registry.ts';
import type { GlobalModel, LocalModel } from '../../models/contract/model-interface.ts';
import { loadM4, M4_NAMES, type M4Name, type M4Series } from '../../datasets/m4.ts';
import { PEERS, peerLabel, runPeerReference } from './peer-reference.ts';
import { fmt, ordinal, PEER_TARGETS, ratioRow, scoreRow, table } from './accuracy/report.ts';
import { BENCH_MODEL_SETTINGS, runGlobal, runModel, summarizePeer, type Loaded, type ModelSpec } from './accuracy/runs.ts';
import { QUANTILE_GRID, type SeriesScore, type Summary } from './accuracy/scoring.ts';
import { benchOptions } from './options.ts';

// ---------------------------------------------------------------------------------------------
// Models

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

/** The seasonal periods of an M4 set for models of several: hourly, the day and the week. */
const m4Cycles = (s: M4Series): number[] => (s.seasonLength === 24 ? [24, 168] : [s.seasonLength]);

/** A model as the service loads it (the registry), for the models that are global. */
async function loadModel(name: string): Promise<GlobalModel> {
  const entry = modelEntry(name);
  if (!entry?.loadGlobal) throw new Error(`${name} is not a global model`);
  return entry.loadGlobal(BENCH_MODEL_SETTINGS);
}

const MODELS: Record<string, ModelSpec> = {
  naive: { seasonLength: () => 1, load: async () => ({ model: naive }) },
  'seasonal-naive': { seasonLength: (s) => s.seasonLength, load: async () => ({ model: seasonalNaiveModel }) },
  aets: { seasonLength: (s) => s.seasonLength, load: () => loadOptional('aets.ts', 'aets'), peers: { R: 'ets', statsforecast: 'AutoETS' } },
  aarima: {
    seasonLength: (s) => s.seasonLength,
    load: () => loadOptional('aarima.ts', 'aarima'),
    peers: { R: 'auto.arima', statsforecast: 'AutoARIMA' },
  },
  // aarima without R's approximation (model_config approximation "off"), as statsforecast's AutoARIMA searches.
  'aarima-exact': {
    seasonLength: (s) => s.seasonLength,
    load: () => loadOptional('aarima.ts', 'aarima'),
    options: { options: { approximation: 'off' } },
    peers: { R: 'auto.arima', statsforecast: 'AutoARIMA' },
  },
  theta: { seasonLength: (s) => s.seasonLength, load: () => loadOptional('theta.ts', 'theta'), peers: { statsforecast: 'AutoTheta' } },
  ces: { seasonLength: (s) => s.seasonLength, load: () => loadOptional('ces.ts', 'ces'), peers: { statsforecast: 'AutoCES' } },
  // Hourly: the day and the week, as the service's default for H and the peer's run.
  mstl: { seasonLength: (s) => s.seasonLength, seasonLengths: m4Cycles, load: () => loadOptional('mstl.ts', 'mstl'), peers: { statsforecast: 'MSTL' } },
  // The global model: one fit across all series of the set (runGlobal).
  'svc-global': {
    seasonLength: (s) => s.seasonLength,
    load: async () => ({ global: (await import('../../models/families/svc-global/svc-global.ts')).svcGlobal }),
  },
  // The ensemble with its defaults: also a global model (svc-global is a member).
  ensemble: { seasonLength: (s) => s.seasonLength, seasonLengths: m4Cycles, load: async () => ({ global: await loadModel('ensemble') }) },
};

/** svc-global's targets: MASE at or below aets's, and a whole M4 set fitted and forecast in this many seconds. */
const GLOBAL_TARGET_SECONDS = 60;

// ---------------------------------------------------------------------------------------------
// Entry point

const USAGE = `usage: npm run bench -- accuracy [options]
  --dataset hourly|weekly|all   M4 set(s) to run (default all)
  --models LIST                 comma-separated, from ${Object.keys(MODELS).join(', ')} (default all)
  --limit N                     first N series of each set (after --every)
  --every K                     every K-th series of each set (1st, (K+1)th, ...), a spread-out subset
  --no-r                        skip the R reference (ets, auto.arima)
  --no-statsforecast            skip the statsforecast reference (AutoETS, AutoARIMA, AutoTheta)
  --r-cache DIR                 keep the peers' forecasts in DIR and reuse them when the same series are run again
  --conformal N                 our local models' quantiles from conformal windows (N of them) instead of their own
  --json FILE                   also write the summaries as JSON`;

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      dataset: { type: 'string', default: 'all' },
      models: { type: 'string', default: Object.keys(MODELS).join(',') },
      limit: { type: 'string' },
      every: { type: 'string' },
      'no-r': { type: 'boolean', default: false },
      'no-statsforecast': { type: 'boolean', default: false },
      'r-cache': { type: 'string' },
      json: { type: 'string' },
      conformal: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (!values) return;
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
  const windows = positiveInt(values.conformal);
  if (windows === null || windows === 1) return usageError(`--conformal needs at least 2 windows, got "${values.conformal}"`);
  const conformal = windows === undefined ? undefined : { windows };

  const skipped: Record<string, boolean> = { R: values['no-r'], statsforecast: values['no-statsforecast'] };
  const peers = PEERS.map((peer) => ({ peer, located: skipped[peer.name] ? { unavailable: 'skipped' } : peer.locate() }));
  const cpu = cpus();
  const date = new Date().toISOString();
  console.log(`# M4 accuracy benchmark, ${date}`);
  console.log(
    `machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; Node ${process.version}, single thread`,
  );
  for (const { peer, located } of peers)
    console.log(
      `${peer.name} reference: ${'version' in located ? located.version : located.unavailable === 'skipped' ? 'skipped' : `not available (${located.unavailable})`}`,
    );
  console.log(`quantiles of our local models: ${conformal ? `conformal, ${conformal.windows} rolling-origin windows (--conformal)` : "the models' own"}`);
  console.log(
    `CRPS: quantile approximation (engine/accuracy-metrics.ts crps) on the fixed grid of ${QUANTILE_GRID.length} levels ${QUANTILE_GRID[0]}, ${QUANTILE_GRID[1]}, ..., ${QUANTILE_GRID[QUANTILE_GRID.length - 1]}; in the data's units, so its mean is dominated by the large-valued series.`,
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
    peers: Object.fromEntries(peers.map(({ peer, located }) => [peer.name, 'version' in located ? located.version : null])),
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
      summaries.push(runModel(`${name} ${key}`, l.model, MODELS[key], series, fallback, conformal));
    }
    // Our labels without the dataset prefix used in progress lines.
    const ours = summaries.map((s) => ({ ...s, label: s.label.slice(name.length + 1) }));

    const peerSummaries: Summary[] = [];
    const peerNotes: string[] = [];
    for (const { peer, located } of peers) {
      // Only the methods some model of this run is compared with.
      const methods = peer.methods.filter((m) => modelKeys.some((k) => MODELS[k].peers?.[peer.name] === m));
      if (!('version' in located) || methods.length === 0) continue;
      process.stderr.write(`[${peer.name} ${name}] fitting ${methods.join(', ')} on ${series.length} series in one process...\n`);
      const t0 = Date.now();
      const { results, cached } = await runPeerReference(peer, series, QUANTILE_GRID, {
        label: `${peer.name} ${name}`,
        cacheDir: values['r-cache'],
        command: located.command,
        version: located.version,
        methods,
      });
      peerNotes.push(cached ? `${peer.name} results reused from --r-cache` : `${peer.name} run took ${((Date.now() - t0) / 1000).toFixed(0)}s`);
      peerSummaries.push(...methods.map((m) => summarizePeer(peer, m, results, series, fallback)));
    }
    const rNote = peerNotes.length > 0 ? ` (${peerNotes.join('; ')})` : '';

    console.log(
      `\n## M4 ${name}: ${series.length} of ${total} series, ${subset}; horizon ${s0.horizon}, freq ${s0.seasonLength}${rNote}; load average now ${loadavg()
        .map((x) => x.toFixed(2))
        .join(', ')}\n`,
    );
    const rows = [...ours.map(scoreRow), ...[...unavailable].map(([k, why]) => [k, String(series.length), '-', why]), ...peerSummaries.map(scoreRow)];
    console.log(table(['model', 'series', 'failed', 'sMAPE %', 'MASE', 'CRPS', 'cover 80%', 'ms/series', 'median ms', 'CPU ms/series'], rows));

    const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
    for (const [key, t] of globalTimes) {
      const mine = ours.find((s) => s.label === key)!;
      const timing = `\n${key}: one fit on ${series.length} series in ${t.seconds.toFixed(1)} s wall (${t.cpuSeconds.toFixed(1)} s CPU)`;
      if (key === 'ensemble') {
        // Issue 12: at least 3% better MASE than the best single model of the run, ours or a peer's.
        const singles = [...ours.filter((s) => s.label !== key), ...peerSummaries];
        const best = singles.reduce((a, b) => (b.mase < a.mase ? b : a), singles[0]);
        const ratio = best ? mine.mase / best.mase : NaN;
        console.log(`${timing}; MASE / best single model's (${best?.label ?? 'none run'}) = ${fmt(ratio, 3)} (target <= 0.97 ${verdict(ratio <= 0.97)})`);
        continue;
      }
      const peer = ours.find((s) => s.label === 'aets');
      const ratio = peer ? mine.mase / peer.mase : NaN;
      console.log(
        `${timing.replace(/\)$/, `; target < ${GLOBAL_TARGET_SECONDS} s ${verdict(t.seconds < GLOBAL_TARGET_SECONDS)})`)}; ` +
          (peer ? `MASE / aets MASE = ${fmt(ratio, 3)} (target <= 1 ${verdict(ratio <= 1)})` : 'aets not run (add it to --models to compare)'),
      );
    }
    const failedAll = [...ours, ...peerSummaries].filter((s) => s.failed > 0);
    if (failedAll.length > 0) {
      console.log(
        '\n* series a model failed on (threw or gave a non-finite / mis-sized forecast) are scored with seasonal naive at freq, so means stay comparable:',
      );
      for (const s of failedAll) {
        console.log(`  ${s.label}: ${s.failed} failed, e.g. ${s.firstErrors.join(' | ').slice(0, 300)}`);
      }
    }

    for (const { peer } of peers) {
      const ratioRows: string[][] = [];
      for (const key of modelKeys) {
        const method = MODELS[key].peers?.[peer.name];
        if (!method) continue;
        const mine = unavailable.get(key) ?? ours.find((s) => s.label === key);
        const ref = peerSummaries.find((s) => s.label === peerLabel(peer, method));
        ratioRows.push(ratioRow(key, method, mine, ref, PEER_TARGETS[peer.name]));
      }
      if (ratioRows.length === 0) continue;
      const target = PEER_TARGETS[peer.name];
      console.log(`\nours / ${peer.name} (targets: MASE ratio <= ${target.mase}, time ratio <= ${target.time})\n`);
      console.log(table(['pair', 'MASE ratio', 'time ratio', 'sMAPE ratio', 'CRPS ratio', 'CPU time ratio', 'speed-up'], ratioRows));
    }

    (report.datasets as Record<string, unknown>)[name] = {
      series: series.length,
      total,
      subset,
      ids: series.map((s) => s.id),
      ours,
      unavailable: Object.fromEntries(unavailable),
      peers: peerSummaries,
    };
  }

  if (values.json) {
    writeFileSync(values.json, JSON.stringify(report, null, 2) + '\n');
    console.log(`\nsummaries written to ${values.json}`);
  }
}
