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
  /** Stops the server (SIGTERM, so SQLite is left consistent; SIGKILL if it lingers) and waits until it is gone. */
  stop(): Promise<void>;
}

/** How long a stopping dev server may take before it is killed outright. */
const STOP_TIMEOUT_MS = 10_000;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops a server that an earlier process of ours left running (not our child: no exit event, so poll). */
async function stopByPid(pid: number): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // Gone already.
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  // Bounded: where this process is PID 1 of a container, the orphan became our child but is never
  // reaped by us, so it would look alive as a zombie for ever.
  let killed = false;
  while (alive(pid) && Date.now() < deadline + 2_000) {
    if (!killed && Date.now() > deadline) {
      signal('SIGKILL');
      killed = true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops our own child and waits for its exit. */
function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
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
function startedByUs(marker: string, port: number, database: string): number | null {
  let recorded: { pid?: number; port?: number; database?: string };
  try {
    recorded = JSON.parse(fs.readFileSync(marker, 'utf8'));
  } catch {
    return null;
  }
  if (recorded.port !== port || recorded.database !== database || typeof recorded.pid !== 'number') return null;
  if (!alive(recorded.pid)) return null;
  try {
    return fs.readFileSync(`/proc/${recorded.pid}/cmdline`, 'utf8').split('\0').includes(database) ? recorded.pid : null;
  } catch {
    return recorded.pid;
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
    // A server left running by an earlier process of ours (killed without cleanup) is reused, and
    // stopped with this service like one it started; anyone else's (another DATA_DIR's, another
    // program's) is refused: sharing it would mix two services' jobs.
    const pid = startedByUs(marker, options.port, database);
    if (pid !== null) {
      const stopOnExit = () => {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // Gone already.
        }
      };
      process.once('exit', stopOnExit);
      return { address, stop: () => stopByPid(pid).finally(() => process.off('exit', stopOnExit)) };
    }
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
  // Its own process group: a Ctrl-C in the terminal reaches the service alone, which drains its
  // worker while Temporal still answers and stops the dev server last (docs/operations.md, "Shutdown").
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'inherit'], detached: true });
  // However the service ends short of SIGKILL (a forced exit, an uncaught error), the dev server does not outlive it.
  const stopOnExit = () => child.exitCode === null && child.signalCode === null && child.kill('SIGTERM');
  process.once('exit', stopOnExit);
  child.once('exit', () => process.off('exit', stopOnExit));
  await waitForPort(options.port, child, 60_000);
  fs.writeFileSync(marker, JSON.stringify({ pid: child.pid, port: options.port, database }));
  return { address, stop: () => stopChild(child) };
}
