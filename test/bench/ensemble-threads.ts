/**
 * One `ensemble` request of many short series on the model threads, as the service runs it: its
 * members fit on every thread at once and the event loop combines them (ModelThreads.runCombining),
 * against the whole request on one thread (runGlobal, the way before). Both run in turn, the same
 * tasks each time; the forecasts must be the same. Wall and CPU time (the process's, every thread),
 * medians, and the event loop's longest stall while the spread request runs.
 *
 *   npm run bench -- ensemble-threads [--dataset weekly-monthly] [--threads N] [--limit N] [--repeat 3]
 */
import { availableParallelism } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isDeepStrictEqual } from 'node:util';
import { loadConfig } from '../../config.ts';
import { ModelThreads } from '../../engine/threads/pool.ts';
import type { ThreadResult } from '../../engine/threads/batch.ts';
import type { ForecastTask } from '../../models/contract/model-interface.ts';
import { globalTasks } from './accuracy/runs.ts';
import { median } from './accuracy/scoring.ts';
import { loadShortSet, SHORT_SETS, shortSetTimes, type ShortSet } from './accuracy/short-sets.ts';
import { benchOptions } from './options.ts';

const USAGE = `usage: npm run bench -- ensemble-threads [--dataset NAME] [--threads N] [--limit N] [--repeat K]
  --dataset NAME   a short set (${SHORT_SETS.join(', ')}); default weekly-monthly
  --threads N      model threads (default: the machine's cores, as MODEL_THREADS)
  --limit N        the first N series only
  --repeat K       runs of each way, in turn (default 3)`;

interface Timing {
  wall: number;
  cpu: number;
  stallMs: number;
  results: ThreadResult[];
}

async function timed(run: () => Promise<ThreadResult[]>): Promise<Timing> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const results = await run();
  const wall = (performance.now() - wall0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  loop.disable();
  return { wall, cpu: (cpu.user + cpu.system) / 1e6, stallMs: loop.max / 1e6, results };
}

const forecasts = (results: ThreadResult[]) => results.map((r) => (r.ok ? [r.mean, r.quantiles] : r.message));

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(argv, { dataset: { type: 'string' }, threads: { type: 'string' }, limit: { type: 'string' }, repeat: { type: 'string' } }, USAGE);
  if (values === null) return;
  const name = (values.dataset ?? 'weekly-monthly') as ShortSet;
  if (!SHORT_SETS.includes(name)) {
    console.error(`unknown set ${name}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const size = Number(values.threads ?? availableParallelism());
  const repeat = Number(values.repeat ?? 3);
  let series = await loadShortSet(name);
  if (values.limit !== undefined) series = series.slice(0, Number(values.limit));
  // The ensemble benchmark's request: staggered ends, so that the pools calibrate.
  const tasks: ForecastTask[] = globalTasks(series, { seasonLength: (s) => s.seasonLength }).map((t, i) => ({
    ...t,
    times: shortSetTimes(name, t.history.length, t.history.length + t.horizon, i, series[i].start),
  }));
  const threads = new ModelThreads(size, loadConfig({}).engine.models);
  try {
    // Threads started and every member loaded on each, before anything is timed.
    await Promise.all([threads.runCombining('ensemble', tasks.slice(0, 40), []), threads.runGlobal('ensemble', tasks.slice(0, 40), [], {}, true)]);
    const oneThread: Timing[] = [];
    const spread: Timing[] = [];
    for (let k = 0; k < repeat; k++) {
      oneThread.push(await timed(() => threads.runGlobal('ensemble', tasks, [], {}, true)));
      spread.push(await timed(() => threads.runCombining('ensemble', tasks, [])));
    }
    const same = [...oneThread, ...spread].every((t) => isDeepStrictEqual(forecasts(t.results), forecasts(oneThread[0].results)));
    const row = (label: string, runs: Timing[]) =>
      `${label.padEnd(34)} ${median(runs.map((r) => r.wall))
        .toFixed(3)
        .padStart(8)} ${median(runs.map((r) => r.cpu))
        .toFixed(3)
        .padStart(8)} ${median(runs.map((r) => r.stallMs))
        .toFixed(0)
        .padStart(13)}`;
    console.log(`## ensemble on ${tasks.length} series of ${name}, ${size} model threads, ${repeat} runs each (medians)`);
    console.log(`${'way'.padEnd(34)} ${'wall s'.padStart(8)} ${'CPU s'.padStart(8)} ${'loop stall ms'.padStart(13)}`);
    console.log(row('whole request on one thread', oneThread));
    console.log(row('members on every thread', spread));
    const ratios = oneThread.map((t, k) => t.wall / spread[k].wall);
    console.log(`- wall time, one thread / every thread, run by run: ${ratios.map((r) => r.toFixed(2)).join(', ')}; median ${median(ratios).toFixed(2)}`);
    console.log(`- forecasts identical across every run: ${same ? 'yes' : 'NO'}`);
    if (!same) process.exitCode = 1;
  } finally {
    await threads.close();
  }
}
