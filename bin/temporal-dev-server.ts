import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * The embedded Temporal dev server: a child process keeping its state in a SQLite file under
 * DATA_DIR, so jobs survive a restart of the service.
 */
export interface DevServer {
  address: string;
  stop(): Promise<void>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the Temporal dev server exited with code ${child.exitCode}`);
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the Temporal dev server did not listen on port ${port} within ${timeoutMs / 1000} s`);
}

/**
 * Whether the server on `port` is the one this DATA_DIR started: its marker names the port, and
 * the process it names is alive and (where /proc shows command lines) runs on this database.
 */
function startedByUs(marker: string, port: number, database: string): boolean {
  let recorded: { pid?: number; port?: number; database?: string };
  try {
    recorded = JSON.parse(fs.readFileSync(marker, 'utf8'));
  } catch {
    return false;
  }
  if (recorded.port !== port || recorded.database !== database || typeof recorded.pid !== 'number') return false;
  try {
    process.kill(recorded.pid, 0);
  } catch {
    return false;
  }
  try {
    return fs.readFileSync(`/proc/${recorded.pid}/cmdline`, 'utf8').split('\0').includes(database);
  } catch {
    return true;
  }
}

export async function startDevServer(options: {
  cliPath: string;
  dataDir: string;
  port: number;
  /** The Web UI's port on 127.0.0.1; 0 for none. */
  uiPort: number;
  namespace: string;
}): Promise<DevServer> {
  const address = `127.0.0.1:${options.port}`;
  const database = path.join(options.dataDir, 'temporal.sqlite');
  const marker = path.join(options.dataDir, 'temporal-dev-server.json');
  if (await portOpen(options.port)) {
    // A server left running by an earlier process of ours (killed without cleanup) is reused;
    // anyone else's (another DATA_DIR's, another program's) is refused: sharing it would mix
    // two services' jobs.
    if (startedByUs(marker, options.port, database)) return { address, stop: async () => undefined };
    throw new Error(
      `port ${options.port} is taken by a server this DATA_DIR (${options.dataDir}) did not start: set TEMPORAL_DEV_PORT to a free port for an embedded dev server of its own, or TEMPORAL_ADDRESS=${address} to share that one on purpose`,
    );
  }
  if (!fs.existsSync(options.cliPath)) {
    throw new Error(
      `the Temporal CLI is not at ${options.cliPath}: run 'bash scripts/ensure-temporal-cli.sh' (npm start and npm test do), set TEMPORAL_CLI, or set TEMPORAL_ADDRESS to use an existing cluster`,
    );
  }
  fs.mkdirSync(options.dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    ...(options.uiPort > 0 ? ['--ui-ip', '127.0.0.1', '--ui-port', String(options.uiPort)] : ['--headless']),
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--db-filename',
    database,
    '--log-level',
    'error',
    '--namespace',
    options.namespace,
  ];
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForPort(options.port, child, 60_000);
  fs.writeFileSync(marker, JSON.stringify({ pid: child.pid, port: options.port, database }));
  return {
    address,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
