import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { testTempDir } from '../temp-root.ts';

/** Runs the `forecast` CLI as its users do: the package's executable (bin/forecast.mjs), as a child process. */

const ROOT = path.resolve(import.meta.dirname, '../..');
export const FORECAST_BIN = path.join(ROOT, 'bin/forecast.mjs');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `forecast ...args` in `cwd` with `env` added to this process's environment (FORECAST_* of the caller's shell left out). */
export function runForecast(args: string[], env: Record<string, string>, cwd = ROOT, timeoutMs = 120_000): Promise<CliRun> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FORECAST_')));
  return new Promise((resolve) => {
    execFile(FORECAST_BIN, args, { cwd, env: { ...base, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `forecast ...args` left running: its output so far, and its exit code once it ends. */
export function startForecast(
  args: string[],
  env: Record<string, string>,
  cwd: string,
): { output: () => { stdout: string; stderr: string }; exited: Promise<number | null> } {
  const child = spawn(FORECAST_BIN, args, { cwd, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { output: () => ({ stdout, stderr }), exited: new Promise((resolve) => child.on('close', resolve)) };
}

export const tempDir = (): string => testTempDir('forecast-cli-');

/** Daily sales of a few stores: a level per store, a weekly cycle, a slow trend and fixed noise. */
export function dailySales(stores: string[], days: number, start = Date.UTC(2024, 0, 1)): { unique_id: string; ds: string; y: number }[] {
  const rows: { unique_id: string; ds: string; y: number }[] = [];
  stores.forEach((store, k) => {
    for (let t = 0; t < days; t++) {
      const ds = new Date(start + t * 86_400_000).toISOString().slice(0, 10);
      const weekly = [0.8, 0.9, 1.0, 1.0, 1.1, 1.4, 1.2][t % 7];
      const noise = ((t * 7919 + k * 104729) % 17) - 8;
      rows.push({ unique_id: store, ds, y: Math.round((100 + 40 * k + 0.3 * t) * weekly + noise) });
    }
  });
  return rows;
}

/** A CSV of rows, columns in the order given; values written as they are. */
export function writeCsv(file: string, columns: string[], rows: Record<string, unknown>[]): string {
  fs.writeFileSync(file, [columns.join(','), ...rows.map((r) => columns.map((c) => String(r[c] ?? '')).join(','))].join('\n') + '\n');
  return file;
}

/** Runs SQL on an in-memory DuckDB and returns the rows as plain JS values. */
export async function query(sql: string): Promise<Record<string, unknown>[]> {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    db.closeSync();
  }
}

/** A Parquet file written by DuckDB from a CSV (ds typed as DATE, y as DOUBLE, as pandas users' files are). */
export async function writeParquet(file: string, rows: { unique_id: string; ds: string; y: number }[]): Promise<string> {
  const csv = writeCsv(`${file}.csv`, ['unique_id', 'ds', 'y'], rows);
  await query(
    `COPY (SELECT unique_id, ds::DATE AS ds, y::DOUBLE AS y FROM read_csv('${csv}', columns = {'unique_id': 'VARCHAR', 'ds': 'VARCHAR', 'y': 'VARCHAR'}, header = true))
     TO '${file}' (FORMAT parquet)`,
  );
  fs.rmSync(csv);
  return file;
}

/**
 * A TCP proxy in front of the service that can go away and come back on the same port (a service
 * restarting), and can drop the connection of the next job submission after the service has
 * answered it (the case an Idempotency-Key exists for: the job was made, the caller did not hear).
 */
export class FlakyProxy {
  port = 0;
  dropNextSubmission = false;
  /** Submissions whose answer was dropped. */
  dropped = 0;
  /**
   * Go away at the next poll of a job's status, before it reaches the service. A test that stops
   * the proxy at a moment of its own races the job: a fast job is done before the outage.
   */
  private outageAtNextPoll: (() => void) | undefined;
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  constructor(private readonly targetPort: number) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      let dropping = false;
      client.on('data', (chunk: Buffer) => {
        const request = chunk.toString('latin1', 0, 32);
        if (this.outageAtNextPoll && request.startsWith('GET /forecast-jobs/')) {
          const wentDown = this.outageAtNextPoll;
          this.outageAtNextPoll = undefined;
          void this.stop().then(wentDown);
          return;
        }
        if (this.dropNextSubmission && request.startsWith('POST /forecast-jobs')) {
          this.dropNextSubmission = false;
          this.dropped++;
          dropping = true;
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => (dropping ? client.destroy() : client.write(chunk)));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    return new Promise((resolve) => server.listen(this.port, '127.0.0.1', () => resolve(void (this.port = (server.address() as net.AddressInfo).port))));
  }

  /** Resolves once the proxy has gone away at a status poll (the poll's connection reset, new ones refused). */
  goDownAtNextPoll(): Promise<void> {
    return new Promise((resolve) => (this.outageAtNextPoll = resolve));
  }

  stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
