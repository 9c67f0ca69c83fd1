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

export async function startDevServer(options: {
  cliPath: string;
  dataDir: string;
  port: number;
  /** The Web UI's port on 127.0.0.1; 0 for none. */
  uiPort: number;
  namespace: string;
}): Promise<DevServer> {
  const address = `127.0.0.1:${options.port}`;
  // A server left running by a previous process of ours (killed without cleanup) is reused.
  if (await portOpen(options.port)) return { address, stop: async () => undefined };
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
    path.join(options.dataDir, 'temporal.sqlite'),
    '--log-level',
    'error',
    '--namespace',
    options.namespace,
  ];
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForPort(options.port, child, 60_000);
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
