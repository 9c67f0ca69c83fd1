/**
 * Scale benchmark: one beta backtest job from one Parquet upload, run the way a data engineer
 * deploys the service (an API process and worker processes, sharing only a Temporal dev server
 * and an S3-compatible bucket, MinIO), against the same work through the engine in this process.
 *
 *   npm run bench -- scale [--series 100000] [--weeks 120] [--cutoffs 10] [--model seasonal-naive]
 *                          [--workers 1] [--threads N] [--skip-in-process]
 *
 * The data: M4 Weekly series (datasets/), each cut to its last `weeks` weeks and repeated under
 * new ids until there are `series` of them, all ending on the same week; cutoffs are the
 * `cutoffs` weeks before the last 13 (M4 Weekly's horizon), so every forecast has actuals.
 * `--workers 1,2` runs the job once per worker count (each worker process `--threads` model
 * threads, one folder of its own), for the scale-out ratio.
 *
 * Prints: forecasts, submission time (upload to job id), job time, forecasts/s, the peak RSS
 * of the API and of each worker process (Linux VmHWM), and a check that every (series, cutoff)
 * was written exactly once; then in-process throughput (schema logic + model + metrics, the
 * backtest core without HTTP, Temporal or Parquet) and the ratio.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DuckDBInstance, DuckDBTimestampValue } from '@duckdb/node-api';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { startDevServer } from '../../bin/temporal-dev-server.ts';
import { loadConfig } from '../../config.ts';
import { loadM4 } from '../../datasets/m4.ts';
import { backtestSettings, dataSpan, planCutoffs, queryCutoffs, runBacktest, targetForecasts } from '../../engine/beta/backtest.ts';
import { openBetaDatabase } from '../../engine/beta/beta-database.ts';
import { prepareSeries } from '../../engine/beta/prepare.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../../engine/beta/resolved-query.ts';
import { parquetSource } from '../../engine/beta/table-sources.ts';
import { Engine } from '../../engine/engine.ts';
import { withConnection } from '../../engine/sql.ts';
import { modelEntry } from '../../models/contract/model-registry.ts';
import { peakRss, startProcess, waitFor } from './deployed-processes.ts';
import { bucketConnection, freePort, startMinio } from '../store/minio.ts';
import { benchOptions } from './options.ts';

const USAGE =
  'usage: npm run bench -- scale [--series 100000] [--weeks 120] [--cutoffs 10] [--model seasonal-naive] [--workers 1[,2]] [--threads N] [--skip-in-process]';
const KEY = 'bench-key';
const WEEK_MS = 7 * 86_400_000;
const HORIZON = 13;
/** Every series ends on this Monday. */
const END_MS = Date.UTC(2024, 11, 30);

function betaQuery(cutoffs: number) {
  const last = END_MS - HORIZON * WEEK_MS;
  return {
    input: {
      source: { uri: 'inline://weekly' },
      columns: { unique_id: 'identifier', ds: { kind: 'time', frequency: '7d' }, y: { kind: 'target', aggregate: 'sum' } },
    },
    prediction_length: `${HORIZON * 7}d`,
    quantiles: [0.1, 0.5, 0.9],
    cutoff: Array.from({ length: cutoffs }, (_, i) => new Date(last - i * WEEK_MS).toISOString().replace('.000Z', 'Z')).reverse(),
  };
}

async function writeData(file: string, count: number, weeks: number): Promise<{ rows: number; bytes: number }> {
  const m4 = (await loadM4('weekly')).filter((s) => s.train.length + s.test.length >= weeks);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  let rows = 0;
  try {
    await c.run('CREATE TABLE weekly (unique_id VARCHAR, ds TIMESTAMP, y DOUBLE)');
    const appender = await c.createAppender('weekly');
    for (let i = 0; i < count; i++) {
      const s = m4[i % m4.length];
      const values = [...s.train, ...s.test].slice(-weeks);
      const id = `${s.id}_${Math.floor(i / m4.length)}`;
      for (let k = 0; k < values.length; k++) {
        appender.appendVarchar(id);
        appender.appendTimestamp(new DuckDBTimestampValue(BigInt(END_MS - (values.length - 1 - k) * WEEK_MS) * 1000n));
        appender.appendDouble(values[k]);
        appender.endRow();
      }
      rows += values.length;
    }
    appender.closeSync();
    await c.run(`COPY weekly TO '${file}' (FORMAT parquet)`);
  } finally {
    c.closeSync();
    db.closeSync();
  }
  return { rows, bytes: fs.statSync(file).size };
}

/** Waits until `count` worker processes poll the job task queue for activities. */
async function waitForPollers(address: string, count: number): Promise<void> {
  const { namespace, taskQueue } = loadConfig().temporal;
  const connection = await Connection.connect({ address });
  try {
    await waitFor(async () => {
      const { pollers } = await connection.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      });
      return new Set(pollers?.map((p) => p.identity)).size >= count;
    }, `${count} worker(s) polling`);
  } finally {
    await connection.close();
  }
}

const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a live process has used so far (Linux /proc). */
function processCpu(pid: number | undefined): number {
  const stat = pid ? fs.readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** CPU seconds the whole machine has been busy (all cores, everything but idle and iowait). */
function machineCpu(): number {
  const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (ticks.reduce((a, b) => a + b, 0) - ticks[3] - ticks[4]) / TICKS_PER_SECOND;
}

function multipart(file: string, query: unknown): { body: Readable; contentType: string } {
  const boundary = `----scale-${Date.now()}`;
  async function* parts() {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="query"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(query)}\r\n`);
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="weekly"; filename="weekly.parquet"\r\n\r\n`);
    yield* fs.createReadStream(file);
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  return { body: Readable.from(parts()), contentType: `multipart/form-data; boundary=${boundary}` };
}

interface JobRun {
  workers: number;
  forecasts: number;
  submitS: number;
  jobS: number;
  apiPeak: number;
  workerPeaks: number[];
  rows: number;
  distinct: number;
  /** CPU seconds during the job: the API process, each worker process, and the whole machine. */
  cpu: { api: number; workers: number[]; machine: number };
}

async function runJob(opts: { file: string; query: unknown; model: string; workers: number; threads: number; dir: string; expected: number }): Promise<JobRun> {
  const dir = fs.mkdtempSync(path.join(opts.dir, `job-${opts.workers}w-`));
  const temporalPort = await freePort();
  const temporal = await startDevServer({ cliPath: loadConfig().temporal.cliPath, dataDir: dir, port: temporalPort, uiPort: 0, namespace: 'default' });
  const minio = await startMinio();
  await minio.createBucket('scale');
  const port = await freePort();
  const base = {
    ...process.env,
    ...minio.env('scale', 'bench/'),
    TEMPORAL_ADDRESS: temporal.address,
    FORECAST_API_KEYS: `bench:${KEY}`,
    RATE_LIMIT_PER_SECOND: '0',
    BETA_MAX_UPLOAD_BYTES: String(8 * 2 ** 30),
  };
  const api = startProcess(
    'bin/server.ts',
    { ...base, RUN_WORKER: 'false', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'api') },
    path.join(dir, 'api.log'),
  );
  const workers = Array.from({ length: opts.workers }, (_, i) =>
    startProcess('bin/worker.ts', { ...base, MODEL_THREADS: String(opts.threads), DATA_DIR: path.join(dir, `worker-${i}`) }, path.join(dir, `worker-${i}.log`)),
  );
  const url = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${KEY}` };
  try {
    await waitFor(async () => (await fetch(`${url}/openapi`)).ok, 'the API');
    // Timing starts once every worker polls for activities: process start-up is not job time.
    await waitForPollers(temporal.address, workers.length);
    const cpuBefore = { api: processCpu(api.pid), workers: workers.map((w) => processCpu(w.pid)), machine: machineCpu() };
    const started = performance.now();
    const { body, contentType } = multipart(opts.file, opts.query);
    const res = await fetch(`${url}/v1-beta/forecast-jobs?model=${opts.model}`, {
      method: 'POST',
      headers: { ...auth, 'content-type': contentType },
      body: Readable.toWeb(body) as ReadableStream,
      duplex: 'half',
    } as RequestInit);
    const submitted = await res.json();
    if (!res.ok) throw new Error(`submission refused: ${JSON.stringify(submitted)}`);
    const submitS = (performance.now() - started) / 1000;
    let state: { status: string; error?: unknown; progress?: unknown } = { status: 'in_progress' };
    let lastPrint = 0;
    while (state.status === 'in_progress') {
      await new Promise((r) => setTimeout(r, 500));
      state = await (await fetch(`${url}/v1-beta/forecast-jobs/${submitted.job_id}`, { headers: auth })).json();
      if (performance.now() - lastPrint > 15_000) {
        lastPrint = performance.now();
        console.error(`  ${((performance.now() - started) / 1000).toFixed(0)} s: ${JSON.stringify(state.progress ?? state.status)}`);
      }
    }
    const jobS = (performance.now() - started) / 1000;
    const cpu = {
      api: processCpu(api.pid) - cpuBefore.api,
      workers: workers.map((w, i) => processCpu(w.pid) - cpuBefore.workers[i]),
      machine: machineCpu() - cpuBefore.machine,
    };
    if (state.status !== 'completed') throw new Error(`job ${state.status}: ${JSON.stringify(state.error)}`);
    const apiPeak = peakRss(api.pid);
    const workerPeaks = workers.map((w) => peakRss(w.pid));
    const { connection, close } = await bucketConnection(minio, 'scale');
    const [row] = (
      await connection.runAndReadAll(
        `SELECT count(*)::BIGINT, count(DISTINCT (unique_id, cutoff))::BIGINT FROM read_parquet('s3://scale/bench/results/job_id=${submitted.job_id}/metrics/*.parquet')`,
      )
    ).getRows();
    close();
    return { workers: opts.workers, forecasts: opts.expected, submitS, jobS, apiPeak, workerPeaks, rows: Number(row[0]), distinct: Number(row[1]), cpu };
  } finally {
    for (const child of [api, ...workers]) child.kill('SIGTERM');
    await Promise.all([api, ...workers].map((child) => new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)))));
    await temporal.stop();
    await minio.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The same backtest through the engine in this process: schema logic, model, metrics. */
async function inProcess(file: string, query: unknown, model: string, threads: number, dir: string): Promise<{ seconds: number; forecasts: number }> {
  const config = loadConfig({ ...process.env, MODEL_THREADS: String(threads), DATA_DIR: dir });
  const engine = new Engine(config.engine);
  const db = await openBetaDatabase({ tempDirectory: path.join(dir, 'duckdb-tmp') });
  try {
    const started = performance.now();
    const resolved = resolveBetaQuery(BetaQuery.parse(query));
    const entry = modelEntry(model)!;
    const sources = { input: parquetSource("part 'weekly'", { root: 'upload', path: ['weekly'] }, [file]), covariates: [] };
    const prepared = await withConnection(db, (c) => prepareSeries(c, resolved, sources));
    const settings = backtestSettings(resolved, entry);
    const planned = planCutoffs(prepared.series, queryCutoffs(resolved, dataSpan(prepared.series, prepared.freq)), prepared.freq);
    const outputs = await runBacktest(engine, entry, settings, planned, prepared, 'background');
    let scored = 0;
    for (const forecast of targetForecasts(planned, outputs, settings)) if (forecast.metrics) scored++;
    return { seconds: (performance.now() - started) / 1000, forecasts: scored };
  } finally {
    db.closeSync();
    await engine.close();
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

export async function run(argv: string[]): Promise<void> {
  const values = benchOptions(
    argv,
    {
      series: { type: 'string', default: '100000' },
      weeks: { type: 'string', default: '120' },
      cutoffs: { type: 'string', default: '10' },
      model: { type: 'string', default: 'seasonal-naive' },
      workers: { type: 'string', default: '1' },
      threads: { type: 'string', default: String(os.availableParallelism()) },
      'skip-in-process': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (!values) return;
  if (values.help) return console.log(USAGE);
  const series = Number(values.series);
  const weeks = Number(values.weeks);
  const cutoffs = Number(values.cutoffs);
  const threads = Number(values.threads);
  const workerCounts = values.workers.split(',').map(Number);
  if (![series, weeks, cutoffs, threads, ...workerCounts].every((n) => Number.isInteger(n) && n >= 1) || weeks < HORIZON + cutoffs + 2) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  for (const script of ['scripts/ensure-temporal-cli.sh', 'scripts/ensure-minio.sh']) spawnSync('bash', [script], { stdio: 'inherit' });
  spawnSync(process.execPath, ['scripts/ensure-duckdb-httpfs.mjs'], { stdio: 'inherit' });

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-scale-'));
  try {
    const file = path.join(dir, 'weekly.parquet');
    const data = await writeData(file, series, weeks);
    const query = betaQuery(cutoffs);
    const expected = series * cutoffs;
    console.log(`scale: ${series} series x ${cutoffs} weekly cutoffs = ${expected} forecasts of ${HORIZON} steps, model ${values.model}`);
    console.log(`upload: ${data.rows} rows, ${mib(data.bytes)} Parquet; ${threads} model thread(s) per process; ${os.availableParallelism()} cores`);
    const runs: JobRun[] = [];
    for (const workers of workerCounts) {
      const job = await runJob({ file, query, model: values.model, workers, threads, dir, expected });
      runs.push(job);
      const rate = job.forecasts / job.jobS;
      const check = job.rows === expected && job.distinct === expected ? 'every (series, cutoff) once' : `MISMATCH: ${job.rows} rows, ${job.distinct} distinct`;
      console.log(
        `job, ${workers} worker process(es): submit ${job.submitS.toFixed(1)} s, total ${job.jobS.toFixed(1)} s, ${rate.toFixed(0)} forecasts/s; peak RSS api ${mib(job.apiPeak)}, workers ${job.workerPeaks.map(mib).join(', ')}; ${check}`,
      );
      const workerCpu = job.cpu.workers.reduce((a, b) => a + b, 0);
      console.log(
        `  CPU s during the job: workers ${job.cpu.workers.map((s) => s.toFixed(1)).join(' + ')}, API ${job.cpu.api.toFixed(1)}, the rest (Temporal, MinIO, this benchmark) ${(job.cpu.machine - workerCpu - job.cpu.api).toFixed(1)}; machine ${job.cpu.machine.toFixed(1)} of ${(job.jobS * os.availableParallelism()).toFixed(1)} available`,
      );
    }
    if (runs.length > 1)
      console.log(`scale-out: ${workerCounts.at(-1)} workers / ${workerCounts[0]}: ${(runs[0].jobS / runs.at(-1)!.jobS).toFixed(2)}x throughput`);
    if (!values['skip-in-process']) {
      const direct = await inProcess(file, query, values.model, threads, dir);
      const rate = direct.forecasts / direct.seconds;
      console.log(`in-process engine: ${direct.seconds.toFixed(1)} s, ${rate.toFixed(0)} forecasts/s (${direct.forecasts} scored)`);
      console.log(`job / in-process throughput: ${((runs[0].forecasts / runs[0].jobS / rate) * 100).toFixed(0)}%`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
