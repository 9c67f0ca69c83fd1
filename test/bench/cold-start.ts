/**
 * `npm run bench -- cold-start [--runs 5] [--skip-build]`
 *
 * How long a new process takes to serve, from the sources with tsx (`npm start`, `npm run worker`)
 * against the build (`npm run start:prod`, `npm run worker:prod`). The API counts until GET
 * /healthz answers (RUN_WORKER=false); a worker until its own /healthz answers, which it serves
 * once its Temporal worker exists, the workflow code bundled or loaded. Every start joins one
 * Temporal dev server and gets a fresh DATA_DIR, as a new replica on a new host would. Starts
 * alternate between the two forms; the medians and their ratio are printed.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { freePort } from '../store/minio.ts';
import { startTestTemporal } from '../jobs/temporal-env.ts';
import { testTempDir } from '../temp-root.ts';
import { median } from './accuracy/scoring.ts';
import { benchOptions } from './options.ts';

const USAGE = 'usage: npm run bench -- cold-start [--runs 5] [--skip-build]';
const ROOT = path.resolve(import.meta.dirname, '../..');
const GIVE_UP_MS = 120_000;

const FORMS = {
  'API, from the sources (tsx)': { args: ['--import', 'tsx', 'bin/server.ts'], worker: false },
  'API, built': { args: ['dist/bin/server.js'], worker: false },
  'worker, from the sources (tsx)': { args: ['--import', 'tsx', 'bin/worker.ts'], worker: true },
  'worker, built': { args: ['dist/bin/worker.js'], worker: true },
} as const;
type Form = keyof typeof FORMS;

/** Milliseconds from spawning the process to its first healthy answer; the process is then killed. */
async function coldStart(form: Form, temporal: TestWorkflowEnvironment): Promise<number> {
  const port = await freePort();
  const dataDir = testTempDir('cold-start-');
  const { args, worker } = FORMS[form];
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: 'cold-start',
    DATA_DIR: dataDir,
    FORECAST_API_KEYS: 'bench:bench-key',
    HOST: '127.0.0.1',
    ...(worker ? { WORKER_METRICS_PORT: String(port) } : { PORT: String(port), RUN_WORKER: 'false' }),
  };
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (child.exitCode !== null) throw new Error(`${form} exited with ${child.exitCode}: ${stderr.slice(-500)}`);
      if (performance.now() - started > GIVE_UP_MS) throw new Error(`${form} did not answer within ${GIVE_UP_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function run(argv: string[]): Promise<void> {
  const options = benchOptions(
    argv,
    { runs: { type: 'string', default: '5' }, 'skip-build': { type: 'boolean', default: false }, help: { type: 'boolean' } },
    USAGE,
  );
  if (!options) return;
  if (options.help) return console.log(USAGE);
  const runs = Number(options.runs);
  if (!options['skip-build']) {
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const temporal = await startTestTemporal();
  const times = Object.fromEntries(Object.keys(FORMS).map((form) => [form, [] as number[]])) as Record<Form, number[]>;
  try {
    // One throwaway round first: it fills the OS's file cache and tsx's transform cache, as any earlier start would have.
    for (const form of Object.keys(FORMS) as Form[]) await coldStart(form, temporal);
    for (let round = 0; round < runs; round++) {
      for (const form of Object.keys(FORMS) as Form[]) times[form].push(await coldStart(form, temporal));
    }
  } finally {
    await temporal.teardown();
  }
  console.log(`\ncold start, median of ${runs} (ms), node ${process.version}:`);
  for (const role of ['API', 'worker']) {
    const before = median(times[`${role}, from the sources (tsx)` as Form]);
    const after = median(times[`${role}, built` as Form]);
    console.log(
      `  ${role.padEnd(7)} sources ${before.toFixed(0).padStart(6)}   built ${after.toFixed(0).padStart(6)}   built/sources ${(after / before).toFixed(2)}`,
    );
  }
  for (const [form, values] of Object.entries(times)) console.log(`  ${form}: ${values.map((v) => v.toFixed(0)).join(', ')}`);
}
