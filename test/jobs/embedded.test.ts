import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { tempDataDir } from '../api/helpers.ts';

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

async function until<T>(probe: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} within ${ms / 1000} s`);
}

let child: ChildProcess | undefined;
afterAll(() => {
  // The server and the dev server it started form one process group.
  if (child?.pid) process.kill(-child.pid, 'SIGKILL');
});

test("embedded mode serves Temporal's Web UI on TEMPORAL_UI_PORT and answers /readyz once Temporal and the store answer", async () => {
  const [api, temporal, ui] = [await freePort(), await freePort(), await freePort()];
  child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bin/server.ts')], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      DATA_DIR: tempDataDir(),
      PORT: String(api),
      TEMPORAL_ADDRESS: '',
      TEMPORAL_DEV_PORT: String(temporal),
      TEMPORAL_UI_PORT: String(ui),
      FORECAST_API_KEYS: 'ops:embedded-test-key',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', () => undefined);
  const ready = await until(
    async () => {
      const res = await fetch(`http://127.0.0.1:${api}/readyz`);
      return res.ok ? ((await res.json()) as unknown) : undefined;
    },
    90_000,
    'the service was not ready',
  );
  expect(ready).toEqual({ status: 'ready', checks: ['temporal', 'storage'] });
  const page = await fetch(`http://127.0.0.1:${ui}/`);
  expect(page.status).toBe(200);
  expect((await page.text()).toLowerCase()).toContain('<!doctype html>');
}, 120_000);
