import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startDevServer, type DevServer } from '../../../bin/temporal-dev-server.ts';
import { loadConfig } from '../../../config.ts';
import { freePort } from '../../store/minio.ts';

/**
 * The processes the load benchmark measures, each started the way it is deployed: the service as
 * `npm start` runs it (bin/server.ts with its in-process job worker and request logging) on a
 * Temporal dev server of its own, and the Fastify hello-world beside it. Everything listens on
 * 127.0.0.1 only and everything is stopped, and its folder removed, by `stop()`.
 */

export const BENCH_KEY = 'bench-load-key';

/**
 * What keeps the service's own limits out of the measurement: the rate limit is off (one
 * principal sends thousands of requests per second here) and the concurrent-jobs quota is lifted
 * (the job clients submit jobs faster than they finish). The other quotas keep their defaults,
 * which the benchmark's requests are well within.
 */
export const LIMIT_SETTINGS = { RATE_LIMIT_PER_SECOND: '0', QUOTA_CONCURRENT_JOBS: '0' } as const;

export interface Service {
  url: string;
  pid: number;
  /** The service's log (request lines included), kept for a failure's diagnosis until stop(). */
  log: string;
  stop(): Promise<void>;
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
  });
}

async function waitUntilAnswering(url: string, child: ChildProcess, log: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`${url} exited with code ${child.exitCode} before answering; its log:\n${fs.readFileSync(log, 'utf8').slice(-4000)}`);
    if (
      await fetch(url).then(
        (r) => r.status < 500,
        () => false,
      )
    )
      return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function startNode(script: string, args: string[], env: NodeJS.ProcessEnv, log: string, nodeFlags: string[] = []): ChildProcess {
  const out = fs.openSync(log, 'a');
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', script, ...args], { env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  return child;
}

/**
 * The service in a child process. `profileDir`: the service writes a V8 CPU profile there when it
 * exits (node --cpu-prof), for where a request's time goes.
 */
export async function startService(dir: string, options: { modelThreads: number; profileDir?: string }): Promise<Service> {
  const config = loadConfig();
  const temporal: DevServer = await startDevServer({
    cliPath: config.temporal.cliPath,
    dataDir: dir,
    port: await freePort(),
    uiPort: 0,
    namespace: 'default',
  });
  const port = await freePort();
  const log = path.join(dir, 'service.log');
  const env = {
    ...process.env,
    ...LIMIT_SETTINGS,
    TEMPORAL_ADDRESS: temporal.address,
    FORECAST_API_KEYS: `bench:${BENCH_KEY}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: path.join(dir, 'service'),
    STORAGE_URL: '',
    MODEL_THREADS: String(options.modelThreads),
  };
  const flags = options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`] : [];
  const child = startNode('bin/server.ts', [], env, log, flags);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    // SIGTERM drains the service (docs/operations.md, "Shutdown") and lets --cpu-prof write its profile.
    child.kill('SIGTERM');
    await waitForExit(child, 60_000);
    await temporal.stop();
  };
  try {
    await waitUntilAnswering(`${url}/healthz`, child, log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, pid: child.pid!, log, stop };
}

/** The Fastify hello-world (hello-world.ts) in a child process, started like the service; `answer`: what its POST /forecast answers. */
export async function startHelloWorld(dir: string, answer: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const log = path.join(dir, 'hello-world.log');
  const answerFile = path.join(dir, 'answer.json');
  fs.writeFileSync(answerFile, answer);
  const child = startNode(new URL('./hello-world.ts', import.meta.url).pathname, [String(port), answerFile], process.env, log);
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    child.kill('SIGTERM');
    await waitForExit(child, 10_000);
  };
  try {
    await waitUntilAnswering(url, child, log);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, pid: child.pid!, stop };
}
