/**
 * Hierarchical reconciliation benchmark (engine/reconciliation/):
 *
 *   npm run bench -- reconciliation [--part scale|accuracy|job|all] [--bottoms N] [--middles N] [--horizon N]
 *                                   [--observations N] [--holdout N] [--window N] [--no-peer]
 *                                   [--job-bottoms N] [--job-cutoffs N] [--job-model NAME] [--job-estimator NAME]
 *
 * scale: a seeded three-level tree (the total, --middles groups, --bottoms series), each method in
 * a process of its own: time to build the structure, to reconcile the means, and the means with
 * standard deviations and 19 quantiles; resident memory before, after the means and at the peak.
 * hierarchicalforecast's sparse reconcilers run on the same inputs as the peer, where it has them.
 *
 * accuracy: fpp2's prison (grouped) and visnights (a tree) from datasets/hierarchical/, aets base
 * forecasts for every series of every level over the last --holdout quarters, then MASE and
 * scaled CRPS per level, base against each method (test/bench/reconciliation/hierarchical-accuracy.ts),
 * with hierarchicalforecast's dense reconcilers timed on the same inputs.
 *
 * job (only when named, it takes minutes): a beta job reconciling a three-level tree through
 * Temporal, API and worker processes (test/bench/reconciliation/job-scale.ts), and the one-step
 * residuals' cost per model.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { HIERARCHICAL_NAMES, loadHierarchical } from '../../datasets/hierarchical.ts';
import { buildHierarchy } from '../../engine/reconciliation/hierarchy-structure.ts';
import type { ReconciliationInput } from '../../engine/reconciliation/reconcile.ts';
import { modelEntry } from '../../models/contract/model-registry.ts';
import { fmt, table } from './accuracy/report.ts';
import { benchOptions } from './options.ts';
import { methodLabel, prepareSet, scoreMethods } from './reconciliation/hierarchical-accuracy.ts';
import { locatePeer, runPeer, type PeerRun } from './reconciliation/peer.ts';
import { jobScalePart } from './reconciliation/job-scale.ts';
import { syntheticTree } from './reconciliation/synthetic-tree.ts';

const USAGE = `usage: npm run bench -- reconciliation [options]
  --part scale|accuracy|job|all  which part to run (default all: scale and accuracy; job only when named)
  --bottoms N                 bottom series of the synthetic tree (default 50000)
  --middles N                 groups between its total and its bottoms (default 250)
  --horizon N                 steps reconciled in the scale part (default 12)
  --observations N            in-sample residuals and history per series in the scale part (default 24)
  --holdout N                 quarters held out and forecast in the accuracy part (default 8)
  --window N                  in-sample residuals and history per series in the accuracy part (default 16)
  --no-peer                   skip hierarchicalforecast
  --job-bottoms N             bottoms of the job part's tree, in 1/100 as many stores and 1/1000 as many regions (default 10000)
  --job-cutoffs N             daily cutoffs of the job part (default 10)
  --job-model NAME            the job part's model (default naive)
  --job-estimator NAME        the job part's min_trace estimator (default mint_shrink)`;

const MIN_TRACE: ReconciliationInput[] = ['ols', 'wls_struct', 'wls_var', 'mint_shrink', 'mint_cov'].map((estimator) => ({ method: 'min_trace', estimator }));
const PROPORTIONS = ['forecast_proportions', 'average_proportions', 'proportion_averages'];
const topDown = PROPORTIONS.map((proportions): ReconciliationInput => ({ method: 'top_down', proportions }));
const middleOut = (level: string[]) => PROPORTIONS.map((proportions): ReconciliationInput => ({ method: 'middle_out', middle_level: level, proportions }));

/** Methods hierarchicalforecast has sparse reconcilers for, with a sparse summing matrix (MiddleOutSparse densifies it). */
const sparsePeer = (m: ReconciliationInput) =>
  m.method === 'bottom_up' || m.method === 'top_down' || ['ols', 'wls_struct', 'wls_var'].includes(m.estimator ?? '');

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      part: { type: 'string', default: 'all' },
      bottoms: { type: 'string', default: '50000' },
      middles: { type: 'string', default: '250' },
      horizon: { type: 'string', default: '12' },
      observations: { type: 'string', default: '24' },
      holdout: { type: 'string', default: '8' },
      window: { type: 'string', default: '16' },
      'no-peer': { type: 'boolean', default: false },
      'job-bottoms': { type: 'string', default: '10000' },
      'job-cutoffs': { type: 'string', default: '10' },
      'job-model': { type: 'string', default: 'naive' },
      'job-estimator': { type: 'string', default: 'mint_shrink' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (!values) return;
  if (values.help) return void console.log(USAGE);
  const numbers = Object.fromEntries(
    ['bottoms', 'middles', 'horizon', 'observations', 'holdout', 'window', 'job-bottoms', 'job-cutoffs'].map((k) => [k, Number(values[k as 'bottoms'])]),
  );
  const bad = Object.entries(numbers).find(([, v]) => !(Number.isInteger(v) && v >= 1));
  if (bad || !['scale', 'accuracy', 'job', 'all'].includes(values.part)) {
    console.error(`${bad ? `--${bad[0]} needs a positive integer` : `unknown --part "${values.part}"`}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (values.part === 'job') {
    const bottoms = numbers['job-bottoms'];
    const stores = Math.max(1, Math.round(bottoms / 100));
    const job = { bottoms, stores, regions: Math.max(1, Math.round(bottoms / 1000)), days: 56 + numbers['job-cutoffs'] };
    const residualModels = ['naive', 'aets', 'theta', 'aarima'];
    return jobScalePart({
      ...job,
      cutoffs: numbers['job-cutoffs'],
      model: values['job-model'],
      estimator: values['job-estimator'],
      residualBottoms: 10,
      residualCutoffs: 1,
      residualModels,
    });
  }
  const peer = values['no-peer'] ? { unavailable: 'skipped (--no-peer)' } : locatePeer();
  const cpu = cpus();
  console.log(`# Hierarchical reconciliation benchmark, ${new Date().toISOString()}`);
  console.log(`machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; Node ${process.version}, one thread`);
  console.log(
    `peer: ${'python' in peer ? 'hierarchicalforecast (scripts/ensure-hierarchicalforecast.sh), fit_predict timed alone, one thread' : peer.unavailable}`,
  );
  const python = 'python' in peer ? peer.python : null;
  if (values.part !== 'accuracy') scalePart(numbers, python);
  if (values.part !== 'scale') await accuracyPart(numbers.holdout, numbers.window, python);
}

function scalePart(o: Record<string, number>, python: string | null): void {
  const { bottoms, middles, horizon, observations } = o;
  console.log(`\n## Scale: a tree of 1 total, ${middles} groups, ${bottoms} bottoms; horizon ${horizon}, ${observations} residuals per series`);
  console.log('Each method in a fresh process. Seconds are wall clock: the means alone; with standard deviations; with them and 19 quantiles.');
  console.log('RSS in MiB: after the inputs are built (base), after the means, and at the peak (19 quantiles are 50,000 x 19 arrays).');
  const methods: ReconciliationInput[] = [{ method: 'bottom_up' }, ...topDown, ...middleOut(['group']).slice(0, 2), ...MIN_TRACE];
  const folder = mkdtempSync(join(tmpdir(), 'reconciliation-scale-'));
  const worker = new URL('./reconciliation/scale-worker.ts', import.meta.url).pathname;
  const ours = methods.map((spec, i) => {
    const args = JSON.stringify({ spec, bottoms, middles, horizon, observations, meansFile: join(folder, `${i}.f64`) });
    const r = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', worker, args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`the scale worker failed on ${methodLabel(spec)}`);
    process.stderr.write(`[scale] ${methodLabel(spec)} done\n`);
    return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, number> & { refusal?: string };
  });
  let peerRun: PeerRun | null = null;
  const peerMethods = methods.filter(sparsePeer);
  const data = python ? syntheticTree(bottoms, middles, horizon, observations) : null;
  const structure = data ? buildHierarchy(data.identifiers, data.series) : null;
  if (python && data && structure) peerRun = runPeer(python, structure, data.base, peerMethods, true);
  const rows = methods.map((spec, i) => {
    const r = ours[i];
    if (r.refusal) return [methodLabel(spec), `refused: ${r.refusal}`];
    const k = peerMethods.indexOf(spec);
    const theirs = peerRun && k >= 0 ? peerRun.results[k] : null;
    const peerCells = !theirs
      ? ['-', '-', '-']
      : 'error' in theirs
        ? [theirs.error.slice(0, 40), '-', '-']
        : [fmt(theirs.seconds, 3), fmt(theirs.seconds / r.meansSeconds, 1), largestDifference(theirs.mean, join(folder, `${i}.f64`), horizon).toExponential(1)];
    return [
      methodLabel(spec),
      fmt(r.buildSeconds, 3),
      fmt(r.meansSeconds, 3),
      fmt(r.sdSeconds, 3),
      fmt(r.fullSeconds, 3),
      fmt(r.baselineRss, 0),
      fmt(r.meansPeakRss, 0),
      fmt(r.peakRss, 0),
      ...peerCells,
    ];
  });
  const header = ['method', 'build s', 'means s', '+sd s', '+sd+19q s', 'base RSS', 'means RSS', 'peak RSS', 'hf means s', 'hf/ours', 'max rel diff'];
  console.log(table(header, rows));
  if (peerRun) {
    console.log(`hierarchicalforecast ${peerRun.version}'s sparse reconcilers, one call each; peak RSS of its process ${fmt(peerRun.peakRssMiB, 0)} MiB.`);
    console.log(
      "max rel diff: against max(1, |ours|). MinTraceSparse solves iteratively (bicgstab, atol 1e-5), and its wls_var takes the residuals' sample variance where the dense MinTrace, our reference, takes their mean square.",
    );
  }
  rmSync(folder, { recursive: true, force: true });
}

/** Largest difference between the peer's means and ours (written by the worker), relative to max(1, |ours|). */
function largestDifference(theirs: Float64Array[], oursFile: string, horizon: number): number {
  const ours = new Float64Array(new Uint8Array(readFileSync(oursFile)).buffer);
  return largestRelative(
    theirs,
    theirs.map((_, i) => ours.subarray(i * horizon, (i + 1) * horizon)),
  );
}

function largestRelative(theirs: Float64Array[], ours: Float64Array[]): number {
  let worst = 0;
  theirs.forEach((m, i) => m.forEach((v, t) => (worst = Math.max(worst, Math.abs(v - ours[i][t]) / Math.max(1, Math.abs(ours[i][t]))))));
  return worst;
}

async function accuracyPart(holdout: number, window: number, python: string | null): Promise<void> {
  const entry = modelEntry('aets');
  if (!entry?.loadLocal) throw new Error('aets is not a local model');
  const model = await entry.loadLocal();
  for (const name of HIERARCHICAL_NAMES) {
    const set = loadHierarchical(name);
    const prepared = prepareSet(set, model, holdout, window);
    const { structure } = prepared;
    const shape = structure.isTree ? 'a tree' : 'grouped';
    console.log(
      `\n## Accuracy: ${name} (${shape}; ${structure.levels.length} levels, ${structure.rowCount} series, ${set.quarters.length} quarters), the last ${holdout} held out`,
    );
    console.log(`Base: aets per series; sd from its quantiles; ${window} one-step residuals and history quarters per series. Means over each level's series.`);
    const methods: ReconciliationInput[] = [{ method: 'bottom_up' }, ...topDown, ...middleOut([set.identifiers[0]]), ...MIN_TRACE];
    const scores = scoreMethods(prepared, methods, set.seasonLength);
    const levelNames = structure.levels.map((l) => (l.kept.length ? l.kept.join('×') : 'total'));
    for (const [title, key] of [
      ['MASE', 'mase'],
      ['scaled CRPS', 'scaledCrps'],
    ] as const) {
      console.log(`\n${title} per level (lower is better)`);
      const rows = scores.map((s) => {
        const per = s[key];
        if (!per) return [s.label, `refused: ${s.refusal!.split(':')[0]}`];
        return [s.label, ...per.map((v) => fmt(v, 3)), fmt(per.reduce((x, y) => x + y, 0) / per.length, 3)];
      });
      console.log(table(['method', ...levelNames, 'mean of levels'], rows));
    }
    if (!python) continue;
    const runnable = methods.filter((_, i) => scores[i + 1].mase !== null);
    const peerRun = runPeer(python, structure, prepared.base, runnable, false, 9);
    const rows = runnable.map((m, k) => {
      const ours = scores[methods.indexOf(m) + 1];
      const theirs = peerRun.results[k];
      if ('error' in theirs) return [methodLabel(m), fmt(ours.seconds * 1000, 2), theirs.error.slice(0, 60)];
      const difference = largestRelative(theirs.mean, ours.mean!);
      return [methodLabel(m), fmt(ours.seconds * 1000, 2), fmt(theirs.seconds * 1000, 2), fmt(theirs.seconds / ours.seconds, 1), difference.toExponential(1)];
    });
    console.log(`\nTime to reconcile the means, ms (median of 9 calls): ours, and hierarchicalforecast ${peerRun.version}'s dense reconcilers`);
    console.log(table(['method', 'ours ms', 'hf ms', 'hf/ours', 'max rel diff'], rows));
  }
}
