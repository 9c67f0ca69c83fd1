/**
 * Foundation models on ONNX Runtime against their reference PyTorch pipelines, on the CPU, in the
 * same run: the same network (the committed fixture, test/fixtures/onnx/<model>/, a tiny network
 * of the reference code with fixed random weights; or `--models-dir`), the same series (M4
 * Hourly, 48 steps from the end of every series' training part), both batched.
 *
 *   npm run bench -- onnx [--models chronos-2,timesfm-2p5,...] [--limit N] [--repeat R] [--threads T]
 *                         [--reference-batch 32,256] [--reference-python MODEL=PYTHON,...] [--models-dir DIR] [--skip-service] [--json FILE]
 *
 * `--models-dir` measures other installed exports instead of the fixtures, e.g. base-size models
 * with random weights (`tools/export/export.py <model> --random-weights --out DIR`), whose
 * network dominates the time as a real checkpoint's does.
 *
 * Per model (the table of onnx-reference.ts):
 * - `reference`: the reference pipeline (Chronos2Pipeline.predict_quantiles, TimesFM 2.5's and
 *   TimesFM 2.0's forecast: the entry points the fixtures' reference.json was recorded with; a
 *   later model's export module's reference_forecast) in its own Python process
 *   (test/bench/peers/onnx-reference.py), the model rebuilt by the export module's builder from
 *   the export's seed and first checked against reference.json (it fails loudly if it is not the
 *   same network), torch on T intra-op threads, one untimed call of the whole set first. Timed at
 *   each of the pipeline's batch sizes in --reference-batch (its batch_size or
 *   per_core_batch_size; default 32, TimesFM 2.0's default, and 256, our adapters' batch) and
 *   reported at its fastest, since TimesFM pads the last batch to a whole one. Its environment is
 *   created on first use from the export's requirements (scripts/ensure-onnx-reference.sh);
 *   --reference-python names an existing one instead (e.g. the export's own virtualenv).
 * - `adapter`: the service's model object (models/contract/model-registry.ts, models/families/foundation/<model>.ts) in
 *   this thread, its ONNX Runtime session on T intra-op threads, one untimed call of the whole
 *   set first; its batching is its own (Chronos-2: 256 rows per batch, TimesFM: 256 series).
 * - `service` (unless --skip-service): POST /forecast with every series in one request, through
 *   validation, planning, the model worker threads and the response (Fastify's inject, no
 *   sockets; the body serialised once, outside the timing), the service's own thread configuration.
 * Each is timed on the whole set, best of R runs; the reference's and the adapter's runs are
 * interleaved (the reference process waits for each timing request). Reports series per second, the ratio adapter /
 * reference (target: at least 1 for every model), and the largest difference between the two
 * forecasts relative to the series' level, which shows the two did the same work.
 */
import { benchOptions } from './options.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { loadM4, type M4Series } from '../../datasets/m4.ts';
import { requireInstalled, type FoundationName } from '../../models/families/foundation/model-store.ts';
import { modelEntry } from '../../models/contract/model-registry.ts';
import type { ForecastOutput, ForecastTask } from '../../models/contract/model-interface.ts';
import { loadConfig } from '../../config.ts';
import { REFERENCES, startReference, type ReferenceResult } from './onnx-reference.ts';

/** Every model of the reference table that has an adapter in the service. */
const DEFAULT_MODELS = Object.keys(REFERENCES)
  .filter((name) => modelEntry(name)?.loadGlobal)
  .join(',');
const USAGE = `usage: npm run bench -- onnx [--models ${DEFAULT_MODELS}] [--limit N] [--repeat R] [--threads T] [--reference-batch 32,256] [--reference-python MODEL=PYTHON,...] [--models-dir DIR] [--skip-service] [--json FILE]`;
const FIXTURES = path.resolve(new URL('../fixtures/onnx', import.meta.url).pathname);
/** The deciles: every model's own levels (TimesFM's references return no others). */
const QUANTILES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9];

interface Result {
  model: string;
  version: string;
  series: number;
  horizon: number;
  contextLength: number;
  threads: number;
  /** The reference's batch size of its fastest run. */
  referenceBatch: number;
  referenceSeconds: number;
  adapterSeconds: number;
  serviceSeconds: number | null;
  referenceSeriesPerSecond: number;
  adapterSeriesPerSecond: number;
  serviceSeriesPerSecond: number | null;
  /** adapter series/s over reference series/s: at least 1 is the target. */
  ratio: number;
  /** Largest |ours - reference| relative to max(|reference|, the series' level). */
  maxRelativeDifference: number;
  identity: ReferenceResult['identity'];
  referenceVersions: Record<string, string>;
}

/**
 * The reference's quantiles [level][step] in increasing order at every step, as the service
 * returns them (models/families/foundation/quantiles.ts): TimesFM 2.0's raw channels cross in a random
 * tiny network, and the comparison is of the network's work, not of that choice.
 */
function increasingAtEveryStep(quantiles: readonly Float64Array[]): Float64Array[] {
  const out = quantiles.map((q) => q.slice());
  const column = new Float64Array(quantiles.length);
  for (let t = 0; t < (quantiles[0]?.length ?? 0); t++) {
    quantiles.forEach((q, k) => (column[k] = q[t]));
    column.sort();
    out.forEach((q, k) => (q[t] = column[k]));
  }
  return out;
}

function maxDifference(ours: ForecastOutput[], reference: ReferenceResult, tasks: readonly ForecastTask[]): number {
  let worst = 0;
  ours.forEach((o, i) => {
    const level = tasks[i].history.reduce((s, v) => s + Math.abs(v), 0) / tasks[i].history.length || 1;
    const theirs = increasingAtEveryStep(reference.quantiles[i]);
    const pairs: [Float64Array, Float64Array][] = [[o.mean, reference.mean[i]], ...o.quantiles.map((q, k) => [q, theirs[k]] as [Float64Array, Float64Array])];
    for (const [x, y] of pairs) {
      if (x.length !== y.length) throw new Error(`series ${i}: ${x.length} forecast steps against the reference's ${y.length}`);
      for (let t = 0; t < x.length; t++) {
        const d = Math.abs(x[t] - y[t]) / Math.max(Math.abs(y[t]), level);
        worst = Number.isNaN(d) ? Infinity : Math.max(worst, d);
      }
    }
  });
  return worst;
}

/** Best of `repeat` runs of `f`, and its last value. */
async function bestOf<T>(repeat: number, f: () => Promise<T>): Promise<[T, number]> {
  let best = Infinity;
  let value: T | undefined;
  for (let r = 0; r < repeat; r++) {
    const started = performance.now();
    value = await f();
    best = Math.min(best, (performance.now() - started) / 1000);
  }
  return [value as T, best];
}

export async function run(args: string[]): Promise<void> {
  const values = benchOptions(
    args,
    {
      models: { type: 'string', default: DEFAULT_MODELS },
      limit: { type: 'string' },
      repeat: { type: 'string', default: '3' },
      threads: { type: 'string' },
      'reference-batch': { type: 'string', default: '32,256' },
      'reference-python': { type: 'string', default: '' },
      json: { type: 'string' },
      'models-dir': { type: 'string' },
      'skip-service': { type: 'boolean', default: false },
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
  for (const name of names) {
    if (!REFERENCES[name]) throw new Error(`no reference pipeline for '${name}' (the table of test/bench/onnx-reference.ts)`);
    if (!modelEntry(name)?.loadGlobal) throw new Error(`'${name}' has no adapter in the service (models/contract/model-registry.ts)`);
  }
  const repeat = Math.max(1, Number(values.repeat));
  const batchSizes = values['reference-batch'].split(',').map(Number);
  const pythonOf = new Map(
    values['reference-python']
      .split(',')
      .filter((s) => s.includes('='))
      .map((s) => s.split('=', 2).map((x) => x.trim()) as [string, string]),
  );
  // Both sides alone on the machine, one after the other: every core by default.
  const threads = Math.max(1, Number(values.threads ?? os.availableParallelism()));
  let m4 = await loadM4('hourly');
  if (values.limit) m4 = m4.slice(0, Number(values.limit));
  const tasks: ForecastTask[] = m4.map((s) => ({ history: s.train, horizon: s.horizon, quantiles: QUANTILES, seasonLength: s.seasonLength }));
  console.log(`models: ${dir}`);
  console.log(
    `M4 Hourly: ${tasks.length} series, horizon ${tasks[0].horizon}; ONNX Runtime ${ort.env.versions.common} and torch on ${threads} intra-op threads each, best of ${repeat} runs; load average ${os.loadavg()[0].toFixed(2)}`,
  );

  const results: Result[] = [];
  const failures: string[] = [];
  for (const name of names) {
    // A model that fails (its reference not the exported network, an environment that does not
    // install) is reported, and the others still run.
    try {
      results.push(await measure(name, dir, tasks, { batchSizes, threads, repeat, python: pythonOf.get(name) }));
    } catch (err) {
      failures.push(`${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!values['skip-service']) {
    try {
      const service = await serviceLevel(
        dir,
        results.map((r) => r.model as FoundationName),
        m4,
        repeat,
      );
      for (const r of results) {
        r.serviceSeconds = service.get(r.model)!;
        r.serviceSeriesPerSecond = r.series / r.serviceSeconds;
      }
    } catch (err) {
      failures.push(`service level: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  const versions = results.map(
    (r) =>
      `${r.model}: ${Object.entries(r.referenceVersions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
  );
  console.log(`reference environments: ${versions.join('; ')}`);
  const rows = results.map((r) => [
    r.model,
    String(r.series),
    String(r.contextLength),
    r.identity ? `${r.identity.worst.toExponential(1)} (${r.identity.cases.length} cases)` : 'none (no reference.json)',
    `${r.referenceSeriesPerSecond.toFixed(0)} (batch ${r.referenceBatch})`,
    r.adapterSeriesPerSecond.toFixed(0),
    `${r.ratio.toFixed(1)}x`,
    r.serviceSeriesPerSecond === null ? '-' : r.serviceSeriesPerSecond.toFixed(0),
    r.maxRelativeDifference.toExponential(1),
  ]);
  const header = [
    dir === FIXTURES ? 'model (fixture)' : 'model',
    'series',
    'context',
    'reference.json check',
    'reference series/s',
    'adapter series/s',
    'adapter/reference',
    'service series/s',
    'max diff',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padStart(widths[i])).join('  '));
  // Past its first patch Moirai-MoE samples (100 paths), each side with its own generator: its
  // max diff is Monte Carlo spread, and the reference.json check (the first patch's exact
  // distribution) is what proves the network the same.
  if (results.some((r) => r.model === 'moirai-moe'))
    console.log("moirai-moe's max diff compares two samplings (its forecasts past the first patch are Monte Carlo); its reference.json check is exact");
  // The tirex fixture's graph follows torch's float32 order op by op (tools/export/tirex_exact.py)
  // so that the parity tests hold to 1e-4: a parity device, not the graph a checkpoint gets.
  const tirex = results.find((r) => r.model === 'tirex');
  if (tirex?.version.startsWith('tiny-') && !requireInstalled('tirex', dir).manifest.source?.includes('plain order'))
    console.log(
      "tirex's fixture is exported in torch's float32 order for the parity tests; time the tiny network as a checkpoint exports: tools/export/export.py tirex --tiny-fixture --plain-order --out DIR, then --models-dir DIR",
    );
  for (const f of failures) console.log(`FAILED ${f}`);
  if (failures.length) process.exitCode = 1;
  const slow = results.filter((r) => r.ratio < 1);
  if (slow.length) console.log(`slower than the reference: ${slow.map((r) => r.model).join(', ')}`);
  else if (failures.length) console.log('target not shown: a model failed (above)');
  else console.log('target met: every adapter at least as fast as its reference');
  if (values.json)
    fs.writeFileSync(
      values.json,
      JSON.stringify({ date: new Date().toISOString(), cpus: os.availableParallelism(), loadavg: os.loadavg(), results, failures }, null, 2),
    );
}

interface MeasureOptions {
  batchSizes: readonly number[];
  threads: number;
  repeat: number;
  /** An existing environment's python for the reference, instead of the cached one. */
  python?: string;
}

/** One model: its reference pipeline, then our adapter, on the same series. */
async function measure(name: FoundationName, dir: string, tasks: readonly ForecastTask[], options: MeasureOptions): Promise<Result> {
  const model = requireInstalled(name, dir);
  console.error(`${name}: reference pipeline (rebuild, reference.json check, warm-up)...`);
  const reference = await startReference(
    model,
    REFERENCES[name]!,
    { histories: tasks.map((t) => t.history), horizon: tasks[0].horizon, quantiles: QUANTILES, batchSizes: options.batchSizes, threads: options.threads },
    options.python,
  );
  try {
    console.error(`${name}: adapter warm-up, then ${options.repeat} interleaved rounds...`);
    const adapter = await modelEntry(name)!.loadGlobal!({ modelsDir: dir, onnxThreads: options.threads });
    await adapter.forecastBatch(tasks, []); // untimed: the session, first-call allocations and the JIT out of the timing
    // Rounds of one reference pass per batch size, then one adapter pass: a busier moment of a
    // shared machine hits both alike.
    const referenceBest = new Map(options.batchSizes.map((b) => [b, Infinity]));
    let adapterSeconds = Infinity;
    let ours: ForecastOutput[] = [];
    // A pause before each pass: the other side's worker threads (torch's OpenMP, ONNX Runtime's
    // pool) spin a while after their work, which on a small machine would slow this pass.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
    for (let r = 0; r < options.repeat; r++) {
      for (const b of options.batchSizes) {
        await settle();
        referenceBest.set(b, Math.min(referenceBest.get(b)!, await reference.time(b)));
      }
      await settle();
      const [out, seconds] = await bestOf(1, () => adapter.forecastBatch(tasks, []));
      ours = out;
      adapterSeconds = Math.min(adapterSeconds, seconds);
    }
    const result = await reference.finish();
    // The reference at its fastest batch size: TimesFM pads the last batch to a whole one.
    const [referenceBatch, referenceSeconds] = [...referenceBest].reduce((best, next) => (next[1] < best[1] ? next : best));
    return {
      model: name,
      version: model.manifest.version,
      series: tasks.length,
      horizon: tasks[0].horizon,
      contextLength: model.manifest.context_length,
      threads: options.threads,
      referenceBatch,
      referenceSeconds,
      adapterSeconds,
      serviceSeconds: null,
      referenceSeriesPerSecond: tasks.length / referenceSeconds,
      adapterSeriesPerSecond: tasks.length / adapterSeconds,
      serviceSeriesPerSecond: null,
      ratio: referenceSeconds / adapterSeconds,
      maxRelativeDifference: maxDifference(ours, result, tasks),
      identity: result.identity,
      referenceVersions: result.versions,
    };
  } catch (err) {
    await reference.finish().catch(() => undefined);
    throw err;
  }
}

const HOUR_MS = 3_600_000;
/** M4's synthetic index: hourly steps from 2016-01-01 for every series (datasets/README.md). */
const START_MS = Date.UTC(2016, 0, 1);

/** Seconds of one POST /forecast with every series, best of `repeat`, per model. */
async function serviceLevel(dir: string, names: FoundationName[], m4: M4Series[], repeat: number): Promise<Map<string, number>> {
  const key = 'bench-key';
  // Loaded here: the adapter and reference levels do not need the API.
  const { buildServer } = await import('../../api/server.ts');
  const app = await buildServer(loadConfig({ ...process.env, MODELS_DIR: dir, FORECAST_API_KEYS: `bench:${key}`, RATE_LIMIT_PER_SECOND: '0' }));
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const series = m4.map((s) => ({
    target: Array.from(s.train),
    index: Array.from({ length: s.train.length }, (_, k) => new Date(START_MS + k * HOUR_MS).toISOString().slice(0, 19)),
  }));
  // Serialised once: a client's own JSON encoding is not the service's time.
  const payload = JSON.stringify({ series, horizon: m4[0].horizon, freq: 'H', quantiles: QUANTILES });
  const out = new Map<string, number>();
  try {
    for (const name of names) {
      const warm = await app.inject({ method: 'GET', url: `/warmup?model=${name}`, headers });
      if (warm.statusCode !== 200) throw new Error(`GET /warmup?model=${name}: ${warm.body}`);
      const [, seconds] = await bestOf(repeat, async () => {
        const res = await app.inject({ method: 'POST', url: `/forecast?model=${name}`, headers, payload });
        if (res.statusCode !== 200) throw new Error(`POST /forecast?model=${name}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      });
      out.set(name, seconds);
    }
  } finally {
    await app.close();
  }
  return out;
}
