import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { Environment } from '../../config.ts';
import { until } from './temporal-env.ts';

/**
 * Real processes for the job tests (shutdown, worker metrics, idempotency across restarts): the
 * service's entry points started as `npm start` and `npm run worker` start them, signalled, and
 * watched until they exit.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
export const KEY = 'shutdown-key';

export interface RunningProcess {
  child: ChildProcess;
  /** Resolves when the process has exited: its code, signal and the time it did. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  /** What it wrote to stderr so far (for a failing assertion's message). */
  stderr(): string;
  /** The identity Temporal records for its worker. */
  identity: string;
}

const running = new Set<ChildProcess>();
const dataDirs = new Set<string>();

/** `imports`: more modules for `node --import`, after tsx (a hook of test/build's refuse-*.mjs). */
export function startProcess(entry: 'bin/server.ts' | 'bin/worker.ts', env: Environment, imports: string[] = []): RunningProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', ...imports.flatMap((file) => ['--import', file]), path.join(ROOT, entry)], {
    cwd: ROOT,
    env: { ...process.env, MODEL_THREADS: '1', FORECAST_API_KEYS: `ops:${KEY}`, TEMPORAL_UI_PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  if (env.DATA_DIR) dataDirs.add(env.DATA_DIR);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  running.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal, at: Date.now() });
    }),
  );
  return { child, exited, stderr: () => stderr, identity: `${child.pid}@${os.hostname()}` };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid of the embedded Temporal dev server a service started for this DATA_DIR. */
export function devServerPid(dataDir: string): number {
  return JSON.parse(fs.readFileSync(path.join(dataDir, 'temporal-dev-server.json'), 'utf8')).pid;
}

/**
 * Kills the dev server a service started for this DATA_DIR if it still runs (it has a process
 * group of its own, so killing the service's group misses it). Only a process whose command line
 * names this DATA_DIR's database is killed: a recorded pid may have been reused since.
 */
export function killDevServer(dataDir: string): void {
  try {
    const pid = devServerPid(dataDir);
    if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(path.join(dataDir, 'temporal.sqlite'))) process.kill(pid, 'SIGKILL');
  } catch {
    // None started, or gone.
  }
}

/** After a file's tests: whatever is still running, the services and their dev servers, is killed. */
export function killEverything(): void {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of dataDirs) killDevServer(dir);
}

export const waitForApi = (port: number) =>
  until(
    () =>
      fetch(`http://127.0.0.1:${port}/healthz`)
        .then((r) => r.ok)
        .catch(() => false),
    90_000,
    'the API process',
  );

export async function api(port: number, method: string, url: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${port}${url}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

/**
 * Daily series, all alike (so each forecast costs about the same), for aarima with a weekly
 * season: about 1.5 s a forecast at `length` 200 and 3 s at 300 on one model thread.
 */
export function slowRequest(count: number, length: number) {
  const index = Array.from({ length }, (_, t) => new Date(Date.UTC(2023, 0, 1) + t * 86_400_000).toISOString().slice(0, 10));
  const target = index.map((_, t) => 100 + 10 * Math.sin((2 * Math.PI * t) / 7) + ((t * 7919) % 13));
  return {
    series: Array.from({ length: count }, () => ({ target, index })),
    horizon: 14,
    freq: 'D',
    model_config: { model: 'aarima', config: { season_length: 7 } },
  };
}

/** An HTTP/1.1 exchange on a socket of its own: what the server answered, and whether it closed the connection. */
export interface RawExchange {
  socket: net.Socket;
  /** Everything the server sent, once it closed the connection. */
  closed: Promise<string>;
}

export function openConnection(port: number): Promise<RawExchange> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString()));
      const closed = new Promise<string>((done) => socket.once('close', () => done(received)));
      resolve({ socket, closed });
    });
    socket.once('error', reject);
  });
}

/** The head of a request with a JSON body (or none). */
export function requestHead(method: string, url: string, body?: string): string {
  const lines = [`${method} ${url} HTTP/1.1`, 'Host: 127.0.0.1', `Authorization: Bearer ${KEY}`];
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return lines.join('\r\n') + '\r\n';
}

/** One raw HTTP/1.1 response: status, lower-cased headers, body (the server sends Content-Length). */
export function parseResponse(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = raw.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(end + 4) };
}

/** Whether a new TCP connection to the port is refused (the listener is closed). */
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Rows of a job's result parts in a local store: metrics rows, distinct (series, fcd) pairs among them, prediction rows. */
export async function resultRows(dataDir: string, jobId: string): Promise<{ metrics: number; pairs: number; predictions: number }> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    const results = `${dataDir}/results/job_id=${jobId}`;
    const metrics = (
      await connection.runAndReadAll(
        `SELECT count(*)::INTEGER AS metrics, count(DISTINCT (series_index, fcd_index))::INTEGER AS pairs FROM read_parquet('${results}/metrics/*.parquet')`,
      )
    ).getRowObjects()[0];
    const predictions = (
      await connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${results}/predictions/*.parquet')`)
    ).getRowObjects()[0].n;
    return { metrics: Number(metrics.metrics), pairs: Number(metrics.pairs), predictions: Number(predictions) };
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/** Polls a job until it is no longer in progress. */
export function finished(port: number, jobId: string, timeoutMs: number) {
  return until(
    async () => {
      const res = await api(port, 'GET', `/forecast-jobs/${jobId}`).catch(() => undefined);
      return res && res.body.status !== 'in_progress' && res.body;
    },
    timeoutMs,
    'the job to finish',
  );
}
