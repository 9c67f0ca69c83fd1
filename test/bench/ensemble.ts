/**
 * Which combination wins: the ensemble's members run once on an M4 set (each series' whole train
 * part and its rolling-origin windows), then every single member and every combination is scored
 * on the test part from the same forecasts. Single members get conformal quantiles from their own
 * windows; combinations from the combined windows, as the service computes them.
 *
 *   npm run bench -- ensemble [--dataset hourly|weekly|all] [--members aets,theta,svc-global]
 *                             [--windows 5] [--every K] [--limit N]
 */
import { loadM4, M4_NAMES, type M4Name, type M4Series } from '../../datasets/m4.ts';
import { combineTask, DEFAULT_ENSEMBLE, runMembers, type EnsembleRuns } from '../../models/ensemble.ts';
import { COMBINATIONS } from '../../models/ensemble/combine.ts';
import { ENSEMBLE_MEMBERS, loadMember } from '../../models/registry.ts';
import type { ForecastOutput, ForecastTask } from '../../models/types.ts';
import { fmt, fmtCrps, table } from './accuracy/report.ts';
import { globalTasks } from './accuracy/runs.ts';
import { invalidOutput, QUANTILE_GRID, score, summarize, type Summary } from './accuracy/scoring.ts';
import { benchOptions } from './options.ts';

const USAGE = `usage: npm run bench -- ensemble [options]
  --dataset hourly|weekly|all   M4 set(s) (default all)
  --members LIST                comma-separated, from ${ENSEMBLE_MEMBERS.join(', ')} (default ${DEFAULT_ENSEMBLE.members.join(',')})
  --windows N                   rolling-origin windows (default ${DEFAULT_ENSEMBLE.windows})
  --every K                     every K-th series (1st, (K+1)th, ...)
  --limit N                     first N series (after --every)`;

function scoreAll(label: string, series: readonly M4Series[], outputs: readonly ForecastOutput[], cpuMs: number): Summary {
  const errors: string[] = [];
  const scores = series.map((s, i) => {
    const bad = invalidOutput(outputs[i], s.horizon, QUANTILE_GRID.length);
    if (bad !== null) throw new Error(`${label} ${s.id}: ${bad}`);
    return score(s, outputs[i]);
  });
  const perSeries = series.map(() => cpuMs / series.length);
  return summarize(label, scores, perSeries, perSeries, errors);
}

/** One member alone, from the same runs: its mean, conformal quantiles from its own windows. */
function singleRuns(runs: EnsembleRuns, k: number): EnsembleRuns {
  return { cuts: runs.cuts, runs: [runs.runs[k]] };
}

async function runSet(name: M4Name, members: string[], windows: number, every: number, limit: number | undefined): Promise<string> {
  let series = (await loadM4(name)).filter((_, i) => i % every === 0);
  if (limit !== undefined) series = series.slice(0, limit);
  const tasks: ForecastTask[] = globalTasks(series, {
    seasonLength: (s) => s.seasonLength,
    seasonLengths: (s) => (s.seasonLength === 24 ? [24, 168] : [s.seasonLength]),
  });
  const settings = { modelsDir: '', onnxThreads: 1 };
  const memberCpuMs: number[] = [];
  const loaded = await Promise.all(members.map(async (m) => ({ name: m, model: await loadMember(m, settings) })));
  const all: EnsembleRuns = { cuts: [], runs: [] };
  for (const member of loaded) {
    process.stderr.write(`[${name}] ${member.name}: ${series.length} series x (1 + ${windows} windows)...\n`);
    const c0 = process.cpuUsage();
    const { cuts, runs } = await runMembers([member], tasks, [], windows);
    const dc = process.cpuUsage(c0);
    memberCpuMs.push((dc.user + dc.system) / 1000);
    all.cuts.splice(0, all.cuts.length, ...cuts);
    all.runs.push(...runs);
  }
  const rows: Summary[] = [];
  loaded.forEach((m, k) => {
    const single = singleRuns(all, k);
    rows.push(
      scoreAll(
        m.name,
        series,
        tasks.map((t, i) => combineTask(t, i, single, 'mean', [m.name])),
        memberCpuMs[k],
      ),
    );
  });
  const totalCpu = memberCpuMs.reduce((a, b) => a + b, 0);
  for (const combination of COMBINATIONS)
    rows.push(
      scoreAll(
        `ensemble ${combination}`,
        series,
        tasks.map((t, i) => combineTask(t, i, all, combination, members)),
        totalCpu,
      ),
    );
  const best = Math.min(...rows.slice(0, loaded.length).map((r) => r.mase));
  return [
    `## M4 ${name}, ${series.length} series (every ${every}), members ${members.join(', ')}, ${windows} windows`,
    table(
      ['model', 'sMAPE %', 'MASE', 'vs best member', 'CRPS', 'cover 80%', 'CPU ms/series (1 + windows fits)'],
      rows.map((r) => [r.label, fmt(r.smape, 3), fmt(r.mase, 3), fmt(r.mase / best, 3), fmtCrps(r.crps), fmt(r.coverage80, 3), fmt(r.cpuMsMean, 1)]),
    ),
  ].join('\n');
}

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      dataset: { type: 'string', default: 'all' },
      members: { type: 'string', default: DEFAULT_ENSEMBLE.members.join(',') },
      windows: { type: 'string', default: String(DEFAULT_ENSEMBLE.windows) },
      every: { type: 'string', default: '1' },
      limit: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (!values) return;
  if (values.help) return void console.log(USAGE);
  const fail = (msg: string) => {
    console.error(`${msg}\n${USAGE}`);
    process.exitCode = 2;
  };
  const datasets: M4Name[] = values.dataset === 'all' ? [...M4_NAMES] : [values.dataset as M4Name];
  if (datasets.some((d) => !M4_NAMES.includes(d))) return fail(`unknown --dataset "${values.dataset}"`);
  const members = values.members.split(',').filter(Boolean);
  const bad = members.find((m) => !(ENSEMBLE_MEMBERS as readonly string[]).includes(m));
  if (bad !== undefined || members.length < 2) return fail(`--members needs at least two of ${ENSEMBLE_MEMBERS.join(', ')}; got "${values.members}"`);
  const windows = Number(values.windows);
  const every = Number(values.every);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (!(Number.isInteger(windows) && windows >= 2)) return fail(`--windows needs an integer of at least 2`);
  if (!(Number.isInteger(every) && every >= 1) || (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)))
    return fail('--every and --limit need positive integers');
  console.log(`# Ensemble combinations, ${new Date().toISOString()}; quantile grid of ${QUANTILE_GRID.length} levels, conformal (unbiased rule)`);
  for (const name of datasets) console.log(`\n${await runSet(name, members, windows, every, limit)}`);
}
