/**
 * The container image (Containerfile), built and run with buildah: the API and a worker start
 * from the one image as its two roles, against a Temporal dev server on loopback, with a shared
 * volume as their job store, and a job completes. Its HEALTHCHECK passes for both roles and fails
 * once a role has stopped; the image runs as an unprivileged user. Without buildah
 * (scripts/ensure-buildah.sh) it reports itself skipped, with the reason.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testTempDir } from '../temp-root.ts';
import { freePort } from '../store/minio.ts';
import { api, finished, KEY, waitForApi } from '../jobs/service-processes.ts';
import { startTestTemporal, until } from '../jobs/temporal-env.ts';
import { buildah, buildahUnavailable, contextHash, ensureBaseImage, imageLabel } from './buildah.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const IMAGE = 'localhost/forecasting-service:test';
/** The label that records which sources an image was built from (contextHash). */
const CONTEXT_LABEL = 'forecasting-service.test.context';
const unavailable = buildahUnavailable();
// CI installs buildah (scripts/ensure-buildah.sh): there a missing buildah is a failure, not a skip.
if (unavailable && process.env.CI) throw new Error(unavailable);
const log = path.join(testTempDir('container-image-'), 'buildah.log');
/** Where npm keeps downloaded packages: lent to the build so that it installs from them. */
const NPM_CACHE = path.join(os.homedir(), '.npm');

let temporal: TestWorkflowEnvironment;
const containers: string[] = [];
const running: ChildProcess[] = [];

/** `buildah run` of a role in a new container of the image, on the host's network, in the background. */
async function startRole(role: 'api' | 'worker', env: Record<string, string>, volume: string) {
  const container = await buildah(['from', IMAGE], log);
  containers.push(container);
  const settings = Object.entries({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TASK_QUEUE: 'container-image', MODEL_THREADS: '1', ...env });
  const args = [
    '--storage-driver',
    'vfs',
    'run',
    '--isolation',
    'chroot',
    '-v',
    `${volume}:/var/lib/forecasting`,
    ...settings.flatMap(([k, v]) => ['--env', `${k}=${v}`]),
  ];
  const child = spawn('buildah', [...args, container, '--', 'forecasting-service', role], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d));
  running.push(child);
  return { container, child, stderr: () => stderr, settings };
}

/** Runs the image's HEALTHCHECK command in a role's container, with the role's settings: its exit code. */
async function healthcheck(role: Awaited<ReturnType<typeof startRole>>): Promise<number> {
  const env = role.settings.flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  return buildah(['run', '--isolation', 'chroot', ...env, role.container, '--', 'node', 'dist/bin/healthcheck.js'], log).then(
    () => 0,
    () => 1,
  );
}

describe.skipIf(unavailable !== null)(`the container image${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  beforeAll(async () => {
    const base = await ensureBaseImage(log);
    // Built in full each time the sources change: on vfs storage every cached layer is a copy of the whole tree.
    const context = contextHash(ROOT);
    if (imageLabel(IMAGE, CONTEXT_LABEL) !== context) {
      const build = ['bud', '--isolation', 'chroot', '--format', 'docker', '--build-arg', `BASE_IMAGE=${base}`, '--label', `${CONTEXT_LABEL}=${context}`];
      await buildah([...build, '-v', `${NPM_CACHE}:/root/.npm`, '-t', IMAGE, '-f', path.join(ROOT, 'Containerfile'), ROOT], log);
      // The image it replaces, if any, is left untagged: it goes.
      await buildah(['rmi', '--prune'], log).catch(() => undefined);
    }
    temporal = await startTestTemporal();
  }, 1_200_000);

  afterAll(async () => {
    // Each `buildah run` leads its own process group: the service inside it goes with it.
    for (const child of running) if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
    for (const container of containers) await buildah(['rm', container], log).catch(() => undefined);
    await temporal?.teardown();
  });

  test('declares a non-root user, a HEALTHCHECK and both roles', async () => {
    const config = JSON.parse(await buildah(['inspect', '--type', 'image', IMAGE], log)).Docker.config;
    expect(config.User).toBe('10001:10001');
    expect(config.Healthcheck.Test).toEqual(['CMD', 'node', 'dist/bin/healthcheck.js']);
    expect(config.Entrypoint).toEqual(['forecasting-service']);
    expect(config.Cmd).toEqual(['api']);
  });

  test('the API and a worker from the image complete a job', async () => {
    const volume = testTempDir('container-volume-');
    // The service's user in the image owns nothing on this machine.
    fs.chmodSync(volume, 0o777);
    const port = await freePort();
    const metricsPort = await freePort();
    const apiRole = await startRole('api', { PORT: String(port), RUN_WORKER: 'false', FORECAST_API_KEYS: `ops:${KEY}` }, volume);
    // Its PORT is free too: on the host's network, the image's default might be another process's.
    const workerRole = await startRole('worker', { WORKER_METRICS_PORT: String(metricsPort), PORT: String(await freePort()) }, volume);
    await waitForApi(port).catch((error: Error) => {
      throw new Error(`${error.message}: ${apiRole.stderr()}`);
    });
    const workerHealthy = () =>
      fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    await until(workerHealthy, 90_000, 'the worker').catch((error: Error) => {
      throw new Error(`${error.message}: ${workerRole.stderr()}`);
    });

    const index = Array.from({ length: 16 }, (_, d) => new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10));
    const body = { series: [{ target: index.map((_, t) => 10 + (t % 7)), index, fcds: [12, 14] }], horizon: 2, freq: 'D' };
    const submitted = await api(port, 'POST', '/forecast-jobs?model=naive', body);
    expect(submitted.status).toBe(200);
    expect(await finished(port, submitted.body.job_id, 90_000)).toMatchObject({ status: 'completed' });

    expect(await healthcheck(apiRole)).toBe(0);
    expect(await healthcheck(workerRole)).toBe(0);
    // The job's results were written by the image's user, into the shared volume.
    const results = path.join(volume, 'results', `job_id=${submitted.body.job_id}`);
    expect(fs.statSync(results).uid).toBe(10001);

    // Stopped with SIGTERM, the worker drains and exits, and its check fails.
    const exited = new Promise((resolve) => workerRole.child.once('exit', resolve));
    process.kill(-workerRole.child.pid!, 'SIGTERM');
    await exited;
    expect(await healthcheck(workerRole)).toBe(1);
  }, 300_000);
});
