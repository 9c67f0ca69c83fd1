/**
 * The `job` part of the reconciliation benchmark: one beta job that reconciles a three-level
 * tree (regions > stores > bottoms), run as deployed: a Temporal dev server, an API process and a
 * worker process sharing a job store folder. It prints the wall time, each phase's span from the
 * workflow's history, the worker's peak RSS (Linux VmHWM) and the largest incoherence in the
 * job's Parquet. Then the one-step residuals' cost in this process, per model, against the base
 * forecasts' (docs/decisions/062-one-step-residuals.md).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../../../bin/temporal-dev-server.ts';
import { loadConfig } from '../../../config.ts';
import { backtestSettings, dataSpan, planCutoffs, queryCutoffs, runBacktest } from '../../../engine/beta/backtest.ts';
import { openBetaDatabase } from '../../../engine/beta/beta-database.ts';
import { oneStepResiduals } from '../../../engine/beta/one-step-residuals.ts';
import { prepareSeries } from '../../../engine/beta/prepare.ts';
import { BetaQuery } from '../../../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../../../engine/beta/resolved-query.ts';
import { parquetSource } from '../../../engine/beta/table-sources.ts';
import { Engine } from '../../../engine/engine.ts';
import { withConnection } from '../../../engine/sql.ts';
import { modelEntry } from '../../../models/contract/model-registry.ts';
import { freePort } from '../../store/minio.ts';
import { treeQuery } from '../../beta/hierarchy-data.ts';
import { peakRss, residentMemory, startProcess, waitFor } from '../deployed-processes.ts';

export interface JobScaleOptions {
  bottoms: number;
  stores: number;
  regions: number;
  days: number;
  cutoffs: number;
  model: string;
  estimator: string;
  /** Bottoms and cutoffs of the in-process residual timing, and the models it times. */
  residualBottoms: number;
  residualCutoffs: number;
  residualModels: string[];
}

const KEY = 'bench-key';
const HORIZON = 7;
const START_MS = Date.UTC(2024, 0, 1);
const DAY_MS = 86_400_000;
const day = (d: number) => new Date(START_MS + d * DAY_MS).toISOString().slice(0, 10);
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** Bottom b sits in store b mod S, store s in region s mod R: a tree. Positive values with a weekly pattern. */
async function writeTree(file: string, o: Pick<JobScaleOptions, 'bottoms' | 'stores' | 'regions' | 'days'>): Promise<void> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    await c.run(`COPY (
      SELECT TIMESTAMP '${day(0)}' + INTERVAL (d) DAY AS day, 'r' || ((b % ${o.stores}) % ${o.regions}) AS region, 's' || (b % ${o.stores}) AS store,
             'k' || b AS sku, round(10 + (hash(b) % 50)::DOUBLE + 5 * sin(2 * pi() * d / 7 + (hash(b * 7) % 7)::DOUBLE) + ((d * 31 + b * 17) % 13)::DOUBLE / 3, 2) AS units
      FROM range(${o.bottoms}) t(b), range(${o.days}) r(d)) TO '${file}' (FORMAT parquet)`);
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** The tests' three-level tree query (region > store > sku) with this run's cutoffs, not reconciled. */
function scaleQuery(o: JobScaleOptions) {
  const lastCutoff = o.days - 1 - HORIZON;
  return treeQuery({
    prediction_length: `${HORIZON}d`,
    cutoff: [{ every: '1d', start: day(lastCutoff - o.cutoffs + 1), end: day(lastCutoff) }],
    quantiles: [0.1, 0.5, 0.9],
  });
}

/** An activity type's span in a job: first scheduled to last completed (epoch seconds), and its mean duration. */
interface Phase {
  first: number;
  last: number;
  span: number;
  mean: number;
  count: number;
}

/** Each activity type's phase, from the job's history (every run). */
async function phases(address: string, jobId: string): Promise<Map<string, Phase>> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const seconds = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) + (t?.nanos ?? 0) / 1e9;
  const out = new Map<string, { first: number; last: number; total: number; count: number }>();
  try {
    for await (const run of client.workflow.list({ query: `WorkflowId = '${jobId}'` })) {
      const events = (await client.workflow.getHandle(jobId, run.runId).fetchHistory()).events ?? [];
      const scheduled = new Map<string, { type: string; at: number }>();
      for (const e of events) {
        const s = e.activityTaskScheduledEventAttributes;
        if (s) scheduled.set(String(e.eventId), { type: s.activityType?.name ?? '?', at: seconds(e.eventTime) });
        const done = e.activityTaskCompletedEventAttributes;
        if (!done) continue;
        const from = scheduled.get(String(done.scheduledEventId))!;
        const entry = out.get(from.type) ?? { first: Infinity, last: 0, total: 0, count: 0 };
        const at = seconds(e.eventTime);
        out.set(from.type, {
          first: Math.min(entry.first, from.at),
          last: Math.max(entry.last, at),
          total: entry.total + at - from.at,
          count: entry.count + 1,
        });
      }
    }
  } finally {
    await connection.close();
  }
  return new Map([...out].map(([type, p]) => [type, { first: p.first, last: p.last, span: p.last - p.first, mean: p.total / p.count, count: p.count }]));
}

/** The largest relative gap between a store or region mean and the sum of its bottoms', over the job's results. */
async function worstIncoherence(glob: string): Promise<{ stores: number; regions: number; rows: number }> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const gap = (keys: string, level: string) => `
      WITH p AS (SELECT * FROM read_parquet('${glob}')),
           s AS (SELECT ${keys}, cutoff, step, sum(mean) AS total FROM p WHERE level = 'region/store/sku' GROUP BY ALL)
      SELECT max(abs(p.mean - s.total) / greatest(1, abs(s.total))) FROM p JOIN s USING (${keys}, cutoff, step) WHERE p.level = '${level}'`;
    const one = async (sql: string) => Number((await c.runAndReadAll(sql)).getRows()[0][0]);
    return {
      stores: await one(gap('region, store', 'region/store')),
      regions: await one(gap('region', 'region')),
      rows: await one(`SELECT count(*) FROM read_parquet('${glob}')`),
    };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

interface JobRun {
  seconds: number;
  workerPeak: number;
  apiPeak: number;
  spans: Map<string, Phase>;
  /** The worker's resident memory, sampled: epoch seconds and bytes. */
  samples: [number, number][];
  /** Null without reconciliation. */
  check: { stores: number; regions: number; rows: number } | null;
}

/** One job on a fresh stack: a Temporal dev server, an API process and a worker process sharing a store folder. */
async function runJob(file: string, query: unknown, model: string, dir: string): Promise<JobRun> {
  const temporal = await startDevServer({ cliPath: loadConfig().temporal.cliPath, dataDir: dir, port: await freePort(), uiPort: 0, namespace: 'default' });
  const port = await freePort();
  const base = {
    ...process.env,
    STORAGE_URL: `file://${path.join(dir, 'store')}`,
    TEMPORAL_ADDRESS: temporal.address,
    FORECAST_API_KEYS: `bench:${KEY}`,
    RATE_LIMIT_PER_SECOND: '0',
    BETA_MAX_UPLOAD_BYTES: String(2 ** 30),
  };
  const apiEnv = { ...base, RUN_WORKER: 'false', PORT: String(port), HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'api') };
  const api = startProcess('bin/server.ts', apiEnv, path.join(dir, 'api.log'));
  const worker = startProcess('bin/worker.ts', { ...base, DATA_DIR: path.join(dir, 'worker') }, path.join(dir, 'worker.log'));
  const url = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${KEY}` };
  try {
    await waitFor(async () => (await fetch(`${url}/openapi`)).ok, 'the API');
    const form = new FormData();
    form.append('query', new Blob([JSON.stringify(query)], { type: 'application/json' }));
    form.append('sales', new Blob([fs.readFileSync(file)]), 'tree.parquet');
    const samples: [number, number][] = [];
    const sampler = setInterval(() => samples.push([Date.now() / 1000, residentMemory(worker.pid)]), 100);
    const started = performance.now();
    const res = await fetch(`${url}/v1-beta/forecast-jobs?model=${model}`, { method: 'POST', headers: auth, body: form });
    const submitted = await res.json();
    if (!res.ok) throw new Error(`submission refused: ${JSON.stringify(submitted)}`);
    let state: { status: string; error?: unknown } = { status: 'in_progress' };
    while (state.status === 'in_progress') {
      await new Promise((r) => setTimeout(r, 500));
      state = await (await fetch(`${url}/v1-beta/forecast-jobs/${submitted.job_id}`, { headers: auth })).json();
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if (state.status !== 'completed') throw new Error(`job ${state.status}: ${JSON.stringify(state.error)}`);
    const [workerPeak, apiPeak] = [peakRss(worker.pid), peakRss(api.pid)];
    const spans = await phases(temporal.address, submitted.job_id);
    const glob = path.join(dir, 'store', 'results', `job_id=${submitted.job_id}`, 'predictions', '*.parquet');
    const reconciled = (query as { reconciliation?: unknown }).reconciliation !== undefined;
    return { seconds, workerPeak, apiPeak, spans, samples, check: reconciled ? await worstIncoherence(glob) : null };
  } finally {
    for (const child of [api, worker]) child.kill('SIGTERM');
    await Promise.all([api, worker].map((child) => new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)))));
    await temporal.stop();
  }
}

export async function jobScalePart(o: JobScaleOptions): Promise<void> {
  const series = o.bottoms + o.stores + o.regions;
  console.log(`\n## Job: ${o.bottoms} bottoms, ${o.stores} stores, ${o.regions} regions (3 levels, ${series} series) x ${o.cutoffs} daily cutoffs`);
  console.log(`model ${o.model}, horizon ${HORIZON}, ${o.days} days, quantiles 0.1, 0.5, 0.9; one worker process (${os.availableParallelism()} model threads)`);
  console.log('Each job on a fresh Temporal dev server, API process and worker process; the same job without reconciliation first.');
  spawnSync('bash', ['scripts/ensure-temporal-cli.sh'], { stdio: 'inherit' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-reconciliation-job-'));
  try {
    const file = path.join(dir, 'tree.parquet');
    await writeTree(file, o);
    const baseQuery = scaleQuery(o);
    const reconciliation = { method: 'min_trace', estimator: o.estimator };
    const runs: [string, JobRun][] = [];
    for (const [label, query] of [
      ['no reconciliation', baseQuery],
      [`min_trace ${reconciliation.estimator}`, { ...baseQuery, reconciliation }],
    ] as const) {
      const run = await runJob(file, query, o.model, fs.mkdtempSync(path.join(dir, 'job-')));
      runs.push([label, run]);
      process.stderr.write(`[job] ${label}: ${run.seconds.toFixed(1)} s\n`);
    }
    for (const [label, run] of runs) {
      console.log(
        `\n${label}: wall time, submission to completed, ${run.seconds.toFixed(1)} s; peak RSS worker ${mib(run.workerPeak)} MiB, API ${mib(run.apiPeak)} MiB`,
      );
      for (const [type, p] of run.spans) {
        const during = run.samples.filter(([at]) => at >= p.first && at <= p.last).map(([, rss]) => rss);
        const rss = during.length > 0 ? `, worker RSS up to ${mib(Math.max(...during))} MiB` : '';
        console.log(`  ${type}: ${p.count} activities, span ${p.span.toFixed(1)} s, mean ${p.mean.toFixed(2)} s${rss}`);
      }
      if (run.check) {
        const { rows, stores, regions } = run.check;
        console.log(
          `  ${rows} prediction rows; largest relative gap to the sum of the bottoms: stores ${stores.toExponential(1)}, regions ${regions.toExponential(1)}`,
        );
      }
    }
    await residualCost(o, dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Base forecasts against their one-step residuals in this process, per model, on a small tree of the same kind. */
async function residualCost(o: JobScaleOptions, dir: string): Promise<void> {
  const small = { ...o, bottoms: o.residualBottoms, stores: Math.max(1, Math.round(o.residualBottoms / 10)), regions: 1, cutoffs: o.residualCutoffs };
  const smallFile = path.join(dir, 'small.parquet');
  await writeTree(smallFile, small);
  const engine = new Engine(loadConfig({ ...process.env, DATA_DIR: dir }).engine);
  const db = await openBetaDatabase({ tempDirectory: path.join(dir, 'duckdb-tmp') });
  const shape = `${small.bottoms} bottoms, ${small.stores} stores, 1 region; ${small.cutoffs} cutoffs`;
  console.log(`\nOne-step residuals (20 per forecast) against the base forecasts, in this process with ${engine.threads.size} model threads: ${shape}`);
  try {
    const query = resolveBetaQuery(BetaQuery.parse({ ...scaleQuery(small), reconciliation: { method: 'min_trace', estimator: small.estimator } }));
    const sources = { input: parquetSource("part 'sales'", { root: 'upload', path: ['sales'] }, [smallFile]), covariates: [] };
    const prepared = await withConnection(db, (c) => prepareSeries(c, query, sources));
    for (const name of o.residualModels) {
      const model = modelEntry(name)!;
      const settings = backtestSettings(query, model);
      const planned = planCutoffs(prepared.series, queryCutoffs(query, dataSpan(prepared.series, prepared.freq)), prepared.freq);
      // Loaded on every thread and warmed first: the timings are the work's own.
      await runBacktest(engine, model, settings, planned.slice(0, engine.threads.size), prepared, 'background');
      const t0 = performance.now();
      await runBacktest(engine, model, settings, planned, prepared, 'background');
      const t1 = performance.now();
      await oneStepResiduals(engine, model, settings, planned, prepared, 20, 'background');
      const t2 = performance.now();
      const how = model.capabilities.reusesFit ? 'one fit carried forward' : 'a fit per step';
      console.log(
        `  ${name} (${how}): ${planned.length} forecasts ${((t1 - t0) / 1000).toFixed(1)} s, their residuals ${((t2 - t1) / 1000).toFixed(1)} s (x${((t2 - t1) / (t1 - t0)).toFixed(1)})`,
      );
    }
  } finally {
    db.closeSync();
    await engine.close();
  }
}
