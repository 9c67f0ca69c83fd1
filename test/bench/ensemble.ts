/**
 * Which combination wins: the ensemble's members run once on an M4 set (each series' whole train
 * part and its rolling-origin windows), then every single member and every combination is scored
 * on the test part from the same forecasts. Single members get conformal quantiles from their own
 * windows; combinations from the combined windows, as the service computes them; the service's
 * profiles both ways (conformal quantiles and the members' own). CRPS is in the data's units
 * (its mean follows the largest series); scaled CRPS divides each series' by MASE's scale.
 *
 *   npm run bench -- ensemble [--dataset hourly|weekly|all|weekly-yearly|...] [--members aets,theta,svc-global]
 *                             [--windows 5] [--every K] [--limit N] [--default-only]
 *                             [--no-statsforecast] [--peer-cache DIR] [--end-draws N] [--origins K] [--one-period] [--one-by-one]
 *
 * Besides M4 Hourly and Weekly, the short yearly, quarterly, monthly and daily sets of
 * accuracy/short-sets.ts: where the ensemble's short-series profile was chosen. statsforecast's
 * AutoETS, AutoTheta, AutoCES and AutoARIMA run on the same series in the same run, and the
 * default's CPU time is set against the first three's together (issue 40's cost target).
 */
import { loadM4, M4_NAMES, type M4Name, type M4Series } from '../../datasets/m4.ts';
import { combineGroup, combineTask, createEnsemble, profileGroups, runMembers, type EnsembleRuns } from '../../models/families/ensemble/ensemble.ts';
import {
  DEFAULT_WINDOWS,
  LONG_LOW_FREQUENCY_PROFILE,
  LONG_SERIES_PROFILE,
  MULTI_SEASONAL_PROFILE,
  SHORT_SERIES_PROFILE,
  type EnsembleProfile,
} from '../../models/families/ensemble/profiles.ts';
import { COMBINATIONS, ENSEMBLE_INTERVALS } from '../../models/families/ensemble/combine.ts';
import { ENSEMBLE_MEMBERS, loadMember } from '../../models/contract/model-registry.ts';
import type { ForecastOutput, ForecastTask } from '../../models/contract/model-interface.ts';
import type { MemberRun } from '../../models/families/ensemble/members.ts';
import { fmt, fmtCrps, table } from './accuracy/report.ts';
import { BENCH_MODEL_SETTINGS, globalTasks, summarizePeer } from './accuracy/runs.ts';
import { invalidOutput, mean, QUANTILE_GRID, score, summarize, type SeriesScore, type Summary } from './accuracy/scoring.ts';
import { combineByProfile, endYearDraws } from './accuracy/end-draws.ts';
import { backtestSeries, type OriginSeries } from './accuracy/origins.ts';
import { oneByOneRows, serve } from './accuracy/requests.ts';
import { loadShortSet, SHORT_SETS, shortSetTimes, staggersEnds, type ShortSeries, type ShortSet } from './accuracy/short-sets.ts';
import { benchOptions } from './options.ts';
import { STATSFORECAST_PEER, runPeerReference } from './peer-reference.ts';

const USAGE = `usage: npm run bench -- ensemble [options]
  --dataset NAME                hourly, weekly or all (M4; default all), or a set of accuracy/short-sets.ts: ${SHORT_SETS.join(', ')}
  --members LIST                comma-separated, from ${ENSEMBLE_MEMBERS.join(', ')} (default ${LONG_SERIES_PROFILE.members.join(',')}: M4's series are long)
  --windows N                   rolling-origin windows (default ${DEFAULT_WINDOWS})
  --every K                     every K-th series (1st, (K+1)th, ...)
  --limit N                     first N series (after --every)
  --no-statsforecast            skip statsforecast's AutoETS, AutoARIMA, AutoTheta and AutoCES on the same series
  --default-only                only the default as the service runs it (and the peers), not each member and combination
  --peer-cache DIR              keep statsforecast's forecasts in DIR and reuse them when the same series are run again
  --origins K                   on a set of short-sets.ts, a backtest: each series from its last K cuts, one horizon apart, in one request
  --end-draws N                 on a set built from M4 with staggered ends (${SHORT_SETS.filter(staggersEnds).join(', ')}), also score the default's
                                quantiles over N seeded random assignments of the series' end years (accuracy/end-draws.ts)
  --one-period                  on such a set, every series ends on 2020-01-01: one period's panel, as a client sends undated
                                series that it dates to end together
  --one-by-one                  also the default with one series per request, and svc-global alone (its own quantiles) both ways
                                (accuracy/requests.ts)`;

/** statsforecast's models fitted beside ours; the cost target sums the first three (issue 40). */
const PEER_METHODS = ['AutoETS', 'AutoTheta', 'AutoCES', 'AutoARIMA'] as const;
const COST_PEERS = ['AutoETS', 'AutoTheta', 'AutoCES'];

interface PeerSettings {
  readonly command: string;
  readonly version: string;
  readonly cacheDir?: string;
}

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

/** A member run's entries of the given tasks, in that order. */
function pick(run: MemberRun, indices: readonly number[]): MemberRun {
  return { ...run, full: indices.map((i) => run.full[i]), windows: indices.map((i) => run.windows[i]) };
}

/** One member alone, from the same runs: its mean, conformal quantiles from its own windows. */
function singleRuns(runs: EnsembleRuns, k: number): EnsembleRuns {
  return { cuts: runs.cuts, runs: [runs.runs[k]], ran: runs.ran };
}

const WARM_UP_LENGTH = 60;
/** The peers' warm-up series: 60 points of a sine on a trend, season 4, horizon 4. */
const WARM_UP_TASK: ForecastTask = {
  history: Float64Array.from({ length: WARM_UP_LENGTH }, (_, i) => Math.sin(i / 3) + i / 10 + 5),
  horizon: 4,
  quantiles: QUANTILE_GRID,
  seasonLength: 4,
  times: Float64Array.from({ length: WARM_UP_LENGTH + 4 }, (_, i) => Date.UTC(2000, 0, 1) + i * 86_400_000),
};

/**
 * The default as the service runs it, timed: short series fit only the windows their profile
 * reads (models/families/ensemble/ensemble.ts, windowsToRun), and svc-global is trained per
 * profile's group of series.
 */
async function serviceDefault(
  series: readonly M4Series[],
  tasks: readonly ForecastTask[],
  windows: number,
): Promise<{ summary: Summary; outputs: ForecastOutput[] }> {
  const service = createEnsemble((m) => loadMember(m, BENCH_MODEL_SETTINGS));
  // As the peers' script does (peers/statsforecast-accuracy.py): one fit on the same small series
  // before timing, so that one-off set-up (imports, compilation) is not counted as the set's time.
  await service.forecastBatch([WARM_UP_TASK], [], { options: { windows } });
  const { outputs, cpuMs } = await serve(service, tasks, { windows }, false);
  return { summary: scoreAll(SERVICE_LABEL, series, outputs, cpuMs), outputs };
}

/** The default's 80% cover and scaled CRPS at each creation date of a backtest (origins.ts), oldest first. */
function byOrigin(series: readonly OriginSeries[], outputs: readonly ForecastOutput[], origins: number): string {
  const at = Array.from({ length: origins }, (_, origin) => {
    const scores = series.flatMap((s, i) => (s.origin === origin ? [score(s, outputs[i])] : []));
    const scaled = scores.map((s) => s.scaledCrps).filter((c): c is number => c !== null);
    return `${scores.length} series, cover 80% ${fmt(mean(scores.map((s) => s.coverage80)), 3)}, scaled CRPS ${fmt(mean(scaled), 4)}`;
  });
  return `default by creation date, oldest first: ${at.join('; ')}`;
}
const SERVICE_LABEL = 'default, as the service runs it';

type SetName = M4Name | ShortSet;
const isM4 = (name: SetName): name is M4Name => (M4_NAMES as readonly string[]).includes(name);

/** What one set's run does: the command line's choices. */
interface SetRun {
  readonly members: string[];
  readonly windows: number;
  readonly every: number;
  readonly limit: number | undefined;
  readonly peer: PeerSettings | null;
  readonly defaultOnly: boolean;
  /** Random assignments of end years to score the default over; 0 for none (end-draws.ts). */
  readonly endDraws: number;
  /** Creation dates per series of a backtest, one horizon apart (origins.ts); 1: the set's own split alone. */
  readonly origins: number;
  /** Every series of a set with staggered ends ends on the same date instead (shortSetTimes). */
  readonly onePeriod: boolean;
  /** Also score one series per request (requests.ts). */
  readonly oneByOne: boolean;
}

async function runSet(name: SetName, { members, windows, every, limit, peer, defaultOnly, endDraws, origins, onePeriod, oneByOne }: SetRun): Promise<string> {
  let series: ShortSeries[] = (await (isM4(name) ? loadM4(name) : loadShortSet(name))).filter((_, i) => i % every === 0);
  if (limit !== undefined) series = series.slice(0, limit);
  const backtest = !isM4(name) && origins > 1 ? backtestSeries(name, series, origins) : null;
  if (backtest !== null) series = backtest;
  const timesOf = (t: ForecastTask, i: number) =>
    backtest?.[i].times ?? (isM4(name) ? t.times : shortSetTimes(name, t.history.length, t.history.length + t.horizon, onePeriod ? 0 : i, series[i].start));
  const tasks: ForecastTask[] = globalTasks(series, {
    seasonLength: (s) => s.seasonLength,
    seasonLengths: (s) => (s.seasonLength === 24 ? [24, 168] : [s.seasonLength]),
  }).map((t, i) => ({ ...t, times: timesOf(t, i) }));
  // The default's forecasts, kept for the backtest's figures by creation date.
  const kept: { outputs: ForecastOutput[] | null } = { outputs: null };
  const runDefault = async () => {
    const { summary, outputs } = await serviceDefault(series, tasks, windows);
    kept.outputs = outputs;
    return summary;
  };
  const rows: Summary[] = [];
  const memberCpuMs: number[] = [];
  const loaded = await Promise.all(members.map(async (m) => ({ name: m, model: await loadMember(m, BENCH_MODEL_SETTINGS) })));
  // Every window runs (as a weighted combination with conformal quantiles reads them), so that each
  // combination of the table can be scored from one run of each member.
  const everyWindow = { combination: 'weighted', intervals: 'conformal' } as const;
  const all: EnsembleRuns = { cuts: [], runs: [], ran: 'all' };
  for (const member of loaded) {
    process.stderr.write(`[${name}] ${member.name}: ${series.length} series x (1 + ${windows} windows)...\n`);
    const c0 = process.cpuUsage();
    const { cuts, runs } = await runMembers([member], tasks, [], windows, everyWindow);
    const dc = process.cpuUsage(c0);
    memberCpuMs.push((dc.user + dc.system) / 1000);
    all.cuts.splice(0, all.cuts.length, ...cuts);
    all.runs.push(...runs);
  }
  loaded.forEach((m, k) => {
    const single = singleRuns(all, k);
    rows.push(
      scoreAll(
        m.name,
        series,
        tasks.map((t, i) => combineTask(t, i, single, { combination: 'mean', intervals: 'conformal' }, [m.name])),
        memberCpuMs[k],
      ),
    );
  });
  const totalCpu = memberCpuMs.reduce((a, b) => a + b, 0);
  if (defaultOnly) rows.push(await runDefault());
  else
    for (const combination of COMBINATIONS)
      rows.push(scoreAll(`ensemble ${combination}`, series, combineGroup(tasks, all, { combination, intervals: 'conformal' }, members), totalCpu));
  // The service's own choices, where the members ran include them: each profile on every series,
  // and the default (each series its profile). The global member was trained once on the whole
  // set here, where the service trains it per profile's group of series.
  const profileRuns = (p: EnsembleProfile): EnsembleRuns | null =>
    p.members.every((m) => members.includes(m)) ? { cuts: all.cuts, runs: p.members.map((m) => all.runs[members.indexOf(m)]), ran: 'all' } : null;
  const profiles = [
    ['short-series profile', SHORT_SERIES_PROFILE],
    ['long-series profile', LONG_SERIES_PROFILE],
    ['longer monthly profile', LONG_LOW_FREQUENCY_PROFILE],
    ['multi-seasonal profile', MULTI_SEASONAL_PROFILE],
  ] as const;
  const cpuOf = (p: EnsembleProfile) => p.members.reduce((sum, m) => sum + memberCpuMs[members.indexOf(m)], 0);
  const runsOf = new Map(profiles.map(([, p]) => [p, profileRuns(p)]));
  // Each profile as the service runs it, then with the other source of quantiles (same mean).
  for (const [label, profile] of profiles) {
    const runs = runsOf.get(profile);
    if (!runs) continue;
    const other = ENSEMBLE_INTERVALS.filter((kind) => kind !== profile.intervals);
    for (const intervals of [profile.intervals, ...other])
      rows.push(
        scoreAll(
          `${label} (${profile.combination}, ${intervals} quantiles)`,
          series,
          combineGroup(tasks, runs, { ...profile, intervals }, profile.members),
          cpuOf(profile),
        ),
      );
  }
  if (!defaultOnly && [...runsOf.values()].every((runs) => runs !== null)) {
    const groups = profileGroups(tasks, {});
    const outputs = combineByProfile(
      tasks,
      groups.map(({ profile, indices }) => {
        const runs = runsOf.get(profile)!;
        return { profile, indices, runs: { ...runs, cuts: indices.map((i) => runs.cuts[i]), runs: runs.runs.map((r) => pick(r, indices)) } };
      }),
    );
    const shortCount = groups.find((g) => g.profile === SHORT_SERIES_PROFILE)?.indices.length ?? 0;
    rows.push(scoreAll(`default: each series its profile (${shortCount} short)`, series, outputs, NaN));
    rows.push(await runDefault());
  }
  if (oneByOne) for (const { label, served } of await oneByOneRows(tasks, windows)) rows.push(scoreAll(label, series, served.outputs, served.cpuMs));
  const notes: string[] = [];
  if (peer) {
    process.stderr.write(`[${name}] statsforecast ${PEER_METHODS.join(', ')} on ${series.length} series in one process...\n`);
    const { results, cached } = await runPeerReference(STATSFORECAST_PEER, series, QUANTILE_GRID, {
      label: `statsforecast ${name}`,
      cacheDir: peer.cacheDir,
      command: peer.command,
      version: peer.version,
      methods: PEER_METHODS,
    });
    const fallback = new Map<string, SeriesScore>();
    const peerRows = PEER_METHODS.map((m) => summarizePeer(STATSFORECAST_PEER, m, results, series, fallback));
    rows.push(...peerRows);
    const served = rows.find((r) => r.label === SERVICE_LABEL);
    const theta = peerRows[PEER_METHODS.indexOf('AutoTheta')];
    const costPeers = peerRows.filter((_, k) => COST_PEERS.includes(PEER_METHODS[k]));
    const peerCpu = costPeers.reduce((sum, r) => sum + r.cpuMsMean, 0);
    notes.push(`${peer.version}${cached ? ' (forecasts reused from --peer-cache)' : ''}`);
    if (served) {
      notes.push(`default MASE / statsforecast AutoTheta's: ${fmt(served.mase / theta.mase, 3)}`);
      notes.push(`default CPU / (AutoETS + AutoTheta + AutoCES) CPU: ${fmt(served.cpuMsMean / peerCpu, 2)}${cached ? ' (peer CPU from the cached run)' : ''}`);
    }
  }
  if (backtest !== null && kept.outputs !== null) notes.push(byOrigin(backtest, kept.outputs, origins));
  if (endDraws > 0 && !isM4(name) && staggersEnds(name)) {
    process.stderr.write(`[${name}] the default over ${endDraws} random assignments of end years...\n`);
    const { cover, scaledCrps } = await endYearDraws(name, series, tasks, windows, endDraws);
    const spread = (values: number[], digits: number) =>
      `mean ${fmt(mean(values), digits)}, ${fmt(Math.min(...values), digits)} to ${fmt(Math.max(...values), digits)}`;
    notes.push(
      `default over ${endDraws} random assignments of end years (members run once): cover 80% ${spread(cover, 3)}; scaled CRPS ${spread(scaledCrps, 4)}`,
    );
  }
  const best = Math.min(...rows.slice(0, Math.max(1, loaded.length)).map((r) => r.mase));
  return [
    `## ${isM4(name) ? `M4 ${name}` : name}${onePeriod ? ' (one period: every series ends on 2020-01-01)' : ''}, ${series.length} series (every ${every}), members ${defaultOnly ? '(the default only)' : members.join(', ')}, ${windows} windows`,
    table(
      ['model', 'sMAPE %', 'MASE', 'vs best member', 'CRPS', 'scaled CRPS', 'cover 80%', "CPU ms/series (its members' fits)"],
      rows.map((r) => [
        r.label,
        fmt(r.smape, 3),
        fmt(r.mase, 3),
        fmt(r.mase / best, 3),
        fmtCrps(r.crps),
        fmt(r.scaledCrps, 4),
        fmt(r.coverage80, 3),
        fmt(r.cpuMsMean, 1),
      ]),
    ),
    ...notes.map((n) => `- ${n}`),
  ].join('\n');
}

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      dataset: { type: 'string', default: 'all' },
      members: { type: 'string', default: LONG_SERIES_PROFILE.members.join(',') },
      windows: { type: 'string', default: String(DEFAULT_WINDOWS) },
      every: { type: 'string', default: '1' },
      limit: { type: 'string' },
      'no-statsforecast': { type: 'boolean', default: false },
      'peer-cache': { type: 'string' },
      'default-only': { type: 'boolean', default: false },
      'end-draws': { type: 'string', default: '0' },
      origins: { type: 'string', default: '1' },
      'one-period': { type: 'boolean', default: false },
      'one-by-one': { type: 'boolean', default: false },
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
  const known: readonly string[] = [...M4_NAMES, ...SHORT_SETS];
  const datasets: SetName[] = values.dataset === 'all' ? [...M4_NAMES] : [values.dataset as SetName];
  if (datasets.some((d) => !known.includes(d))) return fail(`unknown --dataset "${values.dataset}"`);
  const members = values.members.split(',').filter(Boolean);
  const bad = members.find((m) => !(ENSEMBLE_MEMBERS as readonly string[]).includes(m));
  if (bad !== undefined || members.length < 2) return fail(`--members needs at least two of ${ENSEMBLE_MEMBERS.join(', ')}; got "${values.members}"`);
  const windows = Number(values.windows);
  const every = Number(values.every);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (!(Number.isInteger(windows) && windows >= 2)) return fail(`--windows needs an integer of at least 2`);
  if (!(Number.isInteger(every) && every >= 1) || (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)))
    return fail('--every and --limit need positive integers');
  const endDraws = Number(values['end-draws']);
  if (!(Number.isInteger(endDraws) && endDraws >= 0)) return fail('--end-draws needs an integer of at least 0');
  if (endDraws > 0 && datasets.some((d) => isM4(d) || !staggersEnds(d))) return fail(`--end-draws needs one of ${SHORT_SETS.filter(staggersEnds).join(', ')}`);
  const origins = Number(values.origins);
  if (!(Number.isInteger(origins) && origins >= 1)) return fail('--origins needs a positive integer');
  if (origins > 1 && datasets.some((d) => isM4(d))) return fail('--origins needs a short set');
  if (origins > 1 && endDraws > 0) return fail('--origins and --end-draws score different requests: name one');
  const onePeriod = values['one-period'];
  if (onePeriod && datasets.some((d) => isM4(d) || !staggersEnds(d))) return fail(`--one-period needs one of ${SHORT_SETS.filter(staggersEnds).join(', ')}`);
  if (onePeriod && (origins > 1 || endDraws > 0)) return fail('--one-period scores one request of the set: leave out --origins and --end-draws');
  const oneByOne = values['one-by-one'];
  if (oneByOne && (origins > 1 || endDraws > 0)) return fail('--one-by-one sends each series alone: leave out --origins and --end-draws');
  console.log(`# Ensemble combinations, ${new Date().toISOString()}; quantile grid of ${QUANTILE_GRID.length} levels, conformal (unbiased rule)`);
  let peer: PeerSettings | null = null;
  if (!values['no-statsforecast']) {
    const located = STATSFORECAST_PEER.locate();
    if ('unavailable' in located) console.log(`statsforecast not run: ${located.unavailable}`);
    else peer = { ...located, cacheDir: values['peer-cache'] };
  }
  for (const name of datasets)
    console.log(
      `\n${await runSet(name, { members: values['default-only'] ? [] : members, windows, every, limit, peer, defaultOnly: values['default-only'], endDraws, origins, onePeriod, oneByOne })}`,
    );
}
