/**
 * Foundation models on ONNX Runtime: the fixture models (test/fixtures/onnx, tiny networks of the
 * reference code) over M4 Hourly, 48 steps from the end of every series' training part, batched
 * against one series at a time, in the same run and the same thread.
 *
 *   npm run bench -- onnx [--models chronos-2,timesfm-2p5,timesfm-2] [--limit N] [--repeat R] [--models-dir DIR] [--json FILE]
 *
 * `--models-dir` measures other installed models instead of the fixtures, e.g. base-size models
 * with random weights (`tools/export/export.py <model> --random-weights --out DIR`), whose
 * network dominates the time as a real checkpoint's does.
 *
 * Two levels, each batched against one series at a time:
 * - `adapter`: the adapter called in this thread, the whole set in one call (its own batching:
 *   Chronos-2's 256-row batches, TimesFM's 256 series) against one call per series; pre- and
 *   post-processing and the roll-out past the native horizon included. ONNX_THREADS sets the
 *   session's intra-op threads (default: all cores).
 * - `service`: POST /forecast through the service (validation, planning, the worker thread that
 *   holds the session, the response), one request with every series against one request per
 *   series, sent one after the other (Fastify's inject: no sockets).
 * Reports series per second, the speed-up (target: at least 5x), and the largest difference
 * between the two forecasts relative to the series' level, as a check that batching does not
 * change them.
 */
import { benchOptions } from './options.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { loadM4 } from '../../datasets/m4.ts';
import { forecastChronos2 } from '../../models/foundation/chronos2.ts';
import { requireInstalled, type FoundationName, type InstalledModel } from '../../models/foundation/store.ts';
import { forecastTimesFM2 } from '../../models/foundation/timesfm2.ts';
import { forecastTimesFM25 } from '../../models/foundation/timesfm2p5.ts';
import type { ForecastOutput, ForecastTask } from '../../models/types.ts';
import { buildServer } from '../../api/server.ts';
import { loadConfig } from '../../config.ts';

const USAGE = 'usage: npm run bench -- onnx [--models chronos-2,timesfm-2p5,timesfm-2] [--limit N] [--repeat R] [--models-dir DIR] [--json FILE]';
const FIXTURES = path.resolve(new URL('../fixtures/onnx', import.meta.url).pathname);
const QUANTILES = [0.1, 0.9, 0.4, 0.5];

type Runner = (tasks: readonly ForecastTask[]) => Promise<ForecastOutput[]>;

async function runnerFor(model: InstalledModel, session: ort.InferenceSession): Promise<Runner> {
  const run = (feeds: Record<string, ort.Tensor>) => session.run(feeds);
  if (model.name === 'chronos-2') return (tasks) => forecastChronos2(run, model.manifest as InstalledModel<'chronos-2'>['manifest'], tasks);
  if (model.name === 'timesfm-2') return (tasks) => forecastTimesFM2(run, model.manifest as InstalledModel<'timesfm-2'>['manifest'], tasks);
  return (tasks) => forecastTimesFM25(run, model.manifest as InstalledModel<'timesfm-2p5'>['manifest'], tasks);
}

interface Result {
  level: 'adapter' | 'service';
  model: string;
  version: string;
  series: number;
  horizon: number;
  contextLength: number;
  batchedSeconds: number;
  singleSeconds: number;
  batchedSeriesPerSecond: number;
  singleSeriesPerSecond: number;
  speedup: number;
  maxRelativeDifference: number;
}

function maxDifference(a: ForecastOutput[], b: ForecastOutput[], tasks: readonly ForecastTask[]): number {
  let worst = 0;
  a.forEach((o, i) => {
    const level = tasks[i].history.reduce((s, v) => s + Math.abs(v), 0) / tasks[i].history.length || 1;
    const pairs: [Float64Array, Float64Array][] = [[o.mean, b[i].mean], ...o.quantiles.map((q, k) => [q, b[i].quantiles[k]] as [Float64Array, Float64Array])];
    for (const [x, y] of pairs) for (let t = 0; t < x.length; t++) worst = Math.max(worst, Math.abs(x[t] - y[t]) / Math.max(Math.abs(y[t]), level));
  });
  return worst;
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await f();
  return [value, (performance.now() - started) / 1000];
}

/**
 * Best of `repeat` runs of the whole set in one go against one series at a time, interleaved so
 * that a slower moment of a shared machine hits both ways alike.
 */
async function compare(
  level: Result['level'],
  model: InstalledModel,
  tasks: readonly ForecastTask[],
  repeat: number,
  batchedRun: () => Promise<ForecastOutput[]>,
  singleRun: (index: number) => Promise<ForecastOutput[]>,
): Promise<Result> {
  let batchedSeconds = Infinity;
  let singleSeconds = Infinity;
  let batched: ForecastOutput[] = [];
  let single: ForecastOutput[] = [];
  for (let r = 0; r < repeat; r++) {
    const [b, tb] = await timed(batchedRun);
    const [s, ts] = await timed(async () => {
      const out: ForecastOutput[] = [];
      for (let i = 0; i < tasks.length; i++) out.push(...(await singleRun(i)));
      return out;
    });
    batched = b;
    single = s;
    batchedSeconds = Math.min(batchedSeconds, tb);
    singleSeconds = Math.min(singleSeconds, ts);
  }
  return {
    level,
    model: model.name,
    version: model.manifest.version,
    series: tasks.length,
    horizon: tasks[0].horizon,
    contextLength: model.manifest.context_length,
    batchedSeconds,
    singleSeconds,
    batchedSeriesPerSecond: tasks.length / batchedSeconds,
    singleSeriesPerSecond: tasks.length / singleSeconds,
    speedup: singleSeconds / batchedSeconds,
    maxRelativeDifference: maxDifference(batched, single, tasks),
  };
}

export async function run(args: string[]): Promise<void> {
  const values = benchOptions(
    args,
    {
      models: { type: 'string', default: 'chronos-2,timesfm-2p5,timesfm-2' },
      limit: { type: 'string' },
      repeat: { type: 'string', default: '3' },
      json: { type: 'string' },
      'models-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (!values) return;
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const dir = values['models-dir'] ? path.resolve(values['models-dir']) : FIXTURES;
  const names = values.models.split(',').map((s) => s.trim()) as FoundationName[];
  const repeat = Math.max(1, Number(values.repeat));
  let m4 = await loadM4('hourly');
  if (values.limit) m4 = m4.slice(0, Number(values.limit));
  const tasks: ForecastTask[] = m4.map((s) => ({ history: s.train, horizon: s.horizon, quantiles: QUANTILES, seasonLength: s.seasonLength }));
  // ONNX_THREADS as the service reads it, else every core: this level runs one session alone.
  const threads = Number(process.env.ONNX_THREADS) || os.availableParallelism();
  console.log(`models: ${dir}`);
  console.log(
    `M4 Hourly: ${tasks.length} series, horizon ${tasks[0].horizon}; ONNX Runtime ${ort.env.versions.common}, ${threads} intra-op threads, best of ${repeat} runs`,
  );

  const results: Result[] = [];
  for (const name of names) {
    const model = requireInstalled(name, dir);
    const session = await ort.InferenceSession.create(model.onnxPath, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
    const forecast = await runnerFor(model, session);
    await forecast(tasks.slice(0, 4)); // first-call allocations out of the timing
    results.push(
      await compare(
        'adapter',
        model,
        tasks,
        repeat,
        () => forecast(tasks),
        (i) => forecast([tasks[i]]),
      ),
    );
    await session.release();
  }

  results.push(...(await serviceLevel(dir, names, m4, tasks, repeat)));

  const rows = results.map((r) => [
    r.level,
    r.model,
    String(r.series),
    String(r.contextLength),
    r.batchedSeriesPerSecond.toFixed(0),
    r.singleSeriesPerSecond.toFixed(0),
    `${r.speedup.toFixed(1)}x`,
    r.maxRelativeDifference.toExponential(1),
  ]);
  const header = [
    'level',
    dir === FIXTURES ? 'model (fixture)' : 'model',
    'series',
    'context',
    'batched series/s',
    'one-at-a-time series/s',
    'speed-up',
    'max diff',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padStart(widths[i])).join('  '));
  const slow = results.filter((r) => r.speedup < 5);
  if (slow.length) console.log(`below the 5x target: ${slow.map((r) => `${r.model} (${r.level})`).join(', ')}`);
  if (values.json) fs.writeFileSync(values.json, JSON.stringify({ date: new Date().toISOString(), cpus: os.availableParallelism(), results }, null, 2));
}

const HOUR_MS = 3_600_000;
/** M4's synthetic index: hourly steps from 2016-01-01 for every series (datasets/README.md). */
const START_MS = Date.UTC(2016, 0, 1);

async function serviceLevel(
  dir: string,
  names: FoundationName[],
  m4: Awaited<ReturnType<typeof loadM4>>,
  tasks: readonly ForecastTask[],
  repeat: number,
): Promise<Result[]> {
  const key = 'bench-key';
  const app = await buildServer(loadConfig({ ...process.env, MODELS_DIR: dir, FORECAST_API_KEYS: `bench:${key}`, RATE_LIMIT_PER_SECOND: '0' }));
  const headers = { authorization: `Bearer ${key}` };
  const series = m4.map((s) => ({
    target: Array.from(s.train),
    index: Array.from({ length: s.train.length }, (_, k) => new Date(START_MS + k * HOUR_MS).toISOString().slice(0, 19)),
  }));
  const body = (list: typeof series) => ({ series: list, horizon: m4[0].horizon, freq: 'H', quantiles: QUANTILES });
  const post = async (model: string, list: typeof series) => {
    const res = await app.inject({ method: 'POST', url: `/forecast?model=${model}`, headers, payload: body(list) });
    if (res.statusCode !== 200) throw new Error(`POST /forecast?model=${model}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return (res.json() as { series: { prediction: Record<string, number[]> }[][] }).series.map(([p]) => p.prediction);
  };
  const toOutput = (p: Record<string, number[]>): ForecastOutput => ({
    mean: Float64Array.from(p.mean),
    quantiles: QUANTILES.map((q) => Float64Array.from(p[String(q)])),
  });
  const out: Result[] = [];
  try {
    for (const name of names) {
      const warm = await app.inject({ method: 'GET', url: `/warmup?model=${name}`, headers });
      if (warm.statusCode !== 200) throw new Error(`GET /warmup?model=${name}: ${warm.body}`);
      const batchedRun = async () => (await post(name, series)).map(toOutput);
      out.push(await compare('service', requireInstalled(name, dir), tasks, repeat, batchedRun, async (i) => (await post(name, [series[i]])).map(toOutput)));
    }
  } finally {
    await app.close();
  }
  return out;
}
