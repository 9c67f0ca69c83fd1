import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { tempDataDir } from '../api/helpers.ts';
import { killDevServer } from './service-processes.ts';
import { until } from './temporal-env.ts';

/**
 * `npm start` as a new user runs it: the embedded Temporal dev server (the CLI set-up built) with
 * its Web UI, and the API reporting ready once Temporal and the job store answer.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

const groups: number[] = [];
const dataDirs: string[] = [];
afterAll(() => {
  // Each server is a process group; the dev server it started has a group of its own (docs/operations.md, "Shutdown").
  dataDirs.forEach(killDevServer);
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

function startService(ports: { api: number; temporal: number; ui: number }, dataDir: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bin/server.ts')], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(ports.api),
      TEMPORAL_ADDRESS: '',
      TEMPORAL_DEV_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.ui),
      FORECAST_API_KEYS: 'ops:embedded-test-key',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  groups.push(child.pid!);
  dataDirs.push(dataDir);
  return child;
}

/** The service's /readyz answer once it is ready (it refuses connections until it listens). */
function readiness(api: number, what: string): Promise<unknown> {
  return until(
    async () => {
      const res = await fetch(`http://127.0.0.1:${api}/readyz`).catch(() => undefined);
      return res?.ok ? ((await res.json()) as unknown) : undefined;
    },
    90_000,
    what,
  );
}

test("embedded mode serves Temporal's Web UI on TEMPORAL_UI_PORT and answers /readyz once Temporal and the store answer", async () => {
  const [api, temporal, ui] = [await freePort(), await freePort(), await freePort()];
  const dataDir = tempDataDir();
  const first = startService({ api, temporal, ui }, dataDir);
  first.stderr?.on('data', () => undefined);
  expect(await readiness(api, 'the service to be ready')).toEqual({ status: 'ready', checks: ['temporal', 'storage'] });
  const page = await fetch(`http://127.0.0.1:${ui}/`);
  expect(page.status).toBe(200);
  expect((await page.text()).toLowerCase()).toContain('<!doctype html>');

  // A second service with another DATA_DIR on the same Temporal port refuses to start, saying why,
  // instead of sharing (and mixing jobs with) the first one's dev server.
  const other = startService({ api: await freePort(), temporal, ui: await freePort() }, tempDataDir());
  let stderr = '';
  other.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => other.once('exit', resolve));
  expect(code).toBe(1);
  expect(stderr).toContain(`port ${temporal} is taken by a server this DATA_DIR`);

  // The same DATA_DIR after its service was killed (its dev server left running) takes that dev server back.
  await new Promise((resolve) => {
    first.once('exit', resolve);
    first.kill('SIGKILL');
  });
  const restarted = startService({ api, temporal, ui }, dataDir);
  restarted.stderr?.on('data', () => undefined);
  expect(await readiness(api, 'the restarted service to be ready')).toEqual({ status: 'ready', checks: ['temporal', 'storage'] });
}, 180_000);
