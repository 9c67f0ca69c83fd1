/**
 * The production build (`npm run build`) runs on its own: the built API and a built worker, each
 * started as `npm run start:prod` and `npm run worker:prod` start them, serve the dashboard the
 * build bundled and complete a job, while any file of a development package that either loads
 * stops it (refuse-dev-packages.mjs), as does the SDK's worker in the API (refuse-worker-packages.mjs).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tempDataDir } from '../api/helpers.ts';
import { freePort } from '../store/minio.ts';
import { api, finished, KEY, waitForApi } from '../jobs/service-processes.ts';
import { startTestTemporal, until } from '../jobs/temporal-env.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const REFUSE_DEV_PACKAGES = path.join(import.meta.dirname, 'refuse-dev-packages.mjs');
const REFUSE_WORKER_PACKAGES = path.join(import.meta.dirname, 'refuse-worker-packages.mjs');
const dataDir = tempDataDir();
let temporal: TestWorkflowEnvironment;
let port: number;
const children: { child: ChildProcess; stderr: () => string }[] = [];

function startBuilt(entry: string, env: Record<string, string>, imports: string[] = []) {
  const child = spawn(process.execPath, ['--import', REFUSE_DEV_PACKAGES, ...imports.flatMap((file) => ['--import', file]), entry], {
    cwd: ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'production-build', DATA_DIR: dataDir, MODEL_THREADS: '1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d));
  children.push({ child, stderr: () => stderr });
  return { child, stderr: () => stderr };
}

beforeAll(async () => {
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
  temporal = await startTestTemporal();
  port = await freePort();
}, 180_000);

afterAll(async () => {
  for (const { child } of children) child.kill('SIGKILL');
  await temporal?.teardown();
});

describe('the production build', () => {
  test('holds the compiled entry points, the dashboard and the prebuilt workflow bundle', () => {
    for (const file of [
      'bin/server.js',
      'bin/worker.js',
      'bin/keys.js',
      'bin/healthcheck.js',
      'web/index.html',
      'web/main.js',
      'workflows/job-workflows.bundle.js',
    ]) {
      expect(fs.existsSync(path.join(ROOT, 'dist', file)), file).toBe(true);
    }
  });

  test('a built API and a built worker complete a job, with no development package loaded, and no worker package in the API', async () => {
    // The API runs no worker, so it must not load the SDK's worker either (bin/server.ts).
    const apiProcess = startBuilt('dist/bin/server.js', { PORT: String(port), HOST: '127.0.0.1', RUN_WORKER: 'false', FORECAST_API_KEYS: `ops:${KEY}` }, [
      REFUSE_WORKER_PACKAGES,
    ]);
    const metricsPort = await freePort();
    const worker = startBuilt('dist/bin/worker.js', { WORKER_METRICS_PORT: String(metricsPort), HOST: '127.0.0.1' });
    await waitForApi(port).catch((error: Error) => {
      throw new Error(`${error.message}: ${apiProcess.stderr()}`);
    });
    await until(
      () =>
        fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(
          (r) => r.ok,
          () => worker.child.exitCode !== null && Promise.reject(new Error(`the worker exited: ${worker.stderr()}`)),
        ),
      90_000,
      'the built worker',
    );

    const index = Array.from({ length: 16 }, (_, d) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10));
    const body = { series: [{ target: index.map((_, t) => 10 + (t % 7)), index, fcds: [12, 14] }], horizon: 2, freq: 'D' };
    const submitted = await api(port, 'POST', '/forecast-jobs?model=naive', body);
    expect(submitted.status).toBe(200);
    expect(await finished(port, submitted.body.job_id, 60_000)).toMatchObject({ status: 'completed' });

    // The dashboard comes from the build: nothing was bundled into DATA_DIR at start.
    const page = await fetch(`http://127.0.0.1:${port}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
    expect(fs.existsSync(path.join(dataDir, 'dashboard'))).toBe(false);
    expect(apiProcess.stderr() + worker.stderr()).not.toContain('was loaded at run time');
    expect([apiProcess.child.exitCode, worker.child.exitCode]).toEqual([null, null]);
  }, 180_000);
});
