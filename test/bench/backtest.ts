/**
 * `npm run bench -- backtest [--series N] [--fcds K] [--horizon 48] [--model aets] [--chunk 64]`
 *
 * One backtest (M4 Hourly, K forecast creation dates per series, one horizon apart) run twice in the
 * same process: through the engine directly, then as a job through Temporal (embedded dev
 * server, in-process worker, chunks written as Parquet). Prints both throughputs in
 * (series x dates) per second and Temporal's overhead. Both sides fit on the same worker threads.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createJobWorker } from '../../activities/job-worker.ts';
import { JobService } from '../../api/jobs/job-service.ts';
import { startDevServer } from '../../bin/temporal-dev-server.ts';
import { loadConfig } from '../../config.ts';
import { loadM4 } from '../../datasets/m4.ts';
import { openProcessBetaDatabase } from '../../engine/beta/beta-database.ts';
import { Engine } from '../../engine/engine.ts';
import { computePredictions } from '../../engine/forecast.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { JobStore } from '../../store/job-store.ts';

const config = loadConfig();
const engine = new Engine(config.engine);

function option(args: string[], name: string, fallback: string): string {
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
}

/** Each series as given by M4 (train then test), on a synthetic hourly index (no calendar meaning). */
async function buildRequest(seriesCount: number, fcdsPerSeries: number, horizon: number) {
  const series = (await loadM4('hourly')).slice(0, seriesCount).map((s) => {
    const target = [...s.train, ...s.test];
    const start = Date.UTC(2016, 0, 1);
    const index = target.map((_, t) => new Date(start + t * 3_600_000).toISOString().slice(0, 19));
    const fcds = Array.from({ length: fcdsPerSeries }, (_, k) => target.length - horizon * (fcdsPerSeries - k));
    return { target, index, fcds };
  });
  return ForecastRequest.parse({ series, horizon, freq: 'H', quantiles: [0.1, 0.5, 0.9] });
}

async function timeEngine(request: ForecastRequest, model: string): Promise<number> {
  const started = performance.now();
  const rows = await computePredictions(engine, request, model);
  const seconds = (performance.now() - started) / 1000;
  if (rows.length === 0) throw new Error('no forecasts');
  return seconds;
}

async function timeTemporal(request: ForecastRequest, model: string, forecastsPerChunk: number): Promise<{ seconds: number; forecasts: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-backtest-'));
  const port = 17_000 + Math.floor(Math.random() * 1000);
  const server = await startDevServer({ cliPath: config.temporal.cliPath, dataDir, port, uiPort: 0, namespace: 'default' });
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const taskQueue = 'bench-backtest';
  const store = JobStore.local(dataDir);
  const beta = await openProcessBetaDatabase(dataDir, {});
  const betaJobs = { db: beta.db, locator: config.beta, workDir: path.join(dataDir, 'beta-job-work') };
  const worker = await createJobWorker({ address: server.address, namespace: 'default', taskQueue, forecastsPerChunk }, engine, store, betaJobs);
  const working = worker.run();
  try {
    const jobs = new JobService(client, store, engine, { taskQueue, parallelism: 8, heartbeatTimeoutMs: 30_000, chunksPerRun: 500 });
    const started = performance.now();
    const meta = await jobs.submit(request, model, 'bench');
    for (;;) {
      const state = await jobs.state(meta.job_id);
      if (state.status === 'failed') throw new Error(`job failed: ${state.error.code}: ${state.error.message}`);
      if (state.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return { seconds: (performance.now() - started) / 1000, forecasts: meta.forecasts ?? 0 };
  } finally {
    worker.shutdown();
    await working;
    await connection.close();
    await server.stop();
    beta.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--help')) {
    console.log('npm run bench -- backtest [--series 414] [--fcds 10] [--horizon 48] [--model aets] [--chunk 64]');
    return;
  }
  const seriesCount = Number(option(args, 'series', '414'));
  const fcds = Number(option(args, 'fcds', '10'));
  const model = option(args, 'model', 'aets');
  const chunk = Number(option(args, 'chunk', '64'));
  const horizon = Number(option(args, 'horizon', '48'));
  const request = await buildRequest(seriesCount, fcds, horizon);
  const forecasts = request.series.length * fcds;
  console.log(
    `backtest: ${request.series.length} M4 Hourly series x ${fcds} forecast creation dates = ${forecasts} forecasts, horizon ${horizon}, model ${model}, ${engine.threads.size} model threads, at least ${chunk} forecasts per chunk`,
  );

  // Warm both paths (thread start-up, model code, JIT) on a slice before timing either.
  await timeEngine({ ...request, series: request.series.slice(0, 4) }, model);

  const engineSeconds = await timeEngine(request, model);
  console.log(`engine directly:   ${engineSeconds.toFixed(1)} s, ${(forecasts / engineSeconds).toFixed(2)} forecasts/s`);
  const temporal = await timeTemporal(request, model, chunk);
  console.log(
    `through Temporal:  ${temporal.seconds.toFixed(1)} s, ${(temporal.forecasts / temporal.seconds).toFixed(2)} forecasts/s (job: submit to completed, Parquet written)`,
  );
  const overhead = temporal.seconds / engineSeconds - 1;
  console.log(
    `Temporal overhead: ${(overhead * 100).toFixed(1)}% (throughput ratio engine/Temporal ${(temporal.seconds / engineSeconds).toFixed(3)}; target <= 15%)`,
  );
  await engine.close();
}
