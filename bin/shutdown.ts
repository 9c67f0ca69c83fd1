import type { Worker } from '@temporalio/worker';
import type { FastifyInstance } from 'fastify';

/**
 * Graceful shutdown of the service's processes (docs/operations.md, "Shutdown"). The first SIGINT or SIGTERM
 * runs the process's drain: stop taking work, finish what is in flight within SHUTDOWN_GRACE,
 * hand back what cannot finish, stop the parts in order, exit 0. A second signal, or a drain
 * still running long past the grace, exits 1 at once; the jobs' state is in Temporal and the job
 * store, so even then no job loses rows (unfinished chunks are retried).
 */

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * A repeat within this long after the first signal is the same request to stop, not a second one:
 * one Ctrl-C can arrive twice (from the terminal and forwarded by `npm start`, or by an init
 * that signals the whole process group).
 */
const SAME_SIGNAL_MS = 1_000;

/** What a drain may take beyond the grace (stopping the engine, the job store, Temporal's dev server) before the exit is forced. */
const STOP_MARGIN_MS = 15_000;

/**
 * The Temporal SDK stops every worker on SIGINT and SIGTERM by itself; this process orders its
 * own shutdown instead (the API, the worker and the embedded dev server each at its time). Call
 * before the first worker or native connection is made: the SDK's runtime is set up once. The
 * SDK's worker is imported here, not above, so that a process without a worker never loads it.
 */
export async function orderShutdownOurselves(): Promise<void> {
  const { Runtime } = await import('@temporalio/worker');
  Runtime.install({ shutdownSignals: [] });
}

export interface ShutdownHandle {
  /** The process is up: a signal from now on runs `drain` (before this, a signal exits 1 at once). */
  ready(drain: (signal: NodeJS.Signals) => Promise<void>): void;
}

/** Takes SIGINT and SIGTERM from now on (so one during start-up does not leave anything behind). */
export function handleShutdownSignals(graceMs: number, log: (message: string) => void): ShutdownHandle {
  let drain: ((signal: NodeJS.Signals) => Promise<void>) | undefined;
  let firstSignalAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstSignalAt !== undefined) {
      if (Date.now() - firstSignalAt < SAME_SIGNAL_MS) return;
      log(`${signal} again: exiting now, without waiting for the drain`);
      process.exit(1);
    }
    firstSignalAt = Date.now();
    if (!drain) {
      log(`${signal} while starting: exiting`);
      process.exit(1);
    }
    log(`${signal}: shutting down (in-flight requests and chunks have ${graceMs / 1000} s; a second signal forces the exit)`);
    setTimeout(() => {
      log(`the drain did not end within SHUTDOWN_GRACE + ${STOP_MARGIN_MS / 1000} s: exiting`);
      process.exit(1);
    }, graceMs + STOP_MARGIN_MS).unref();
    drain(signal).then(
      () => {
        log('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log(`the drain failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return {
    ready(d) {
      drain = d;
    },
  };
}

/**
 * Stops a job worker: it stops polling at once; its running chunks finish within the grace the
 * worker was made with, else are cancelled and retried elsewhere. Resolves once it has stopped.
 */
export async function stopWorker(worker: Worker, running: Promise<void>): Promise<void> {
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
}

/**
 * Closes the API: no new connections; a request arriving on an open one is answered 503
 * `shutting_down` (api/draining.ts); requests in flight finish, within the grace, after which
 * their connections are closed unanswered. Resolves once the server is closed.
 */
export async function closeApi(app: FastifyInstance, graceMs: number): Promise<void> {
  const cutOff = setTimeout(() => {
    app.log.warn('requests still running after SHUTDOWN_GRACE: closing their connections unanswered');
    app.server.closeAllConnections();
  }, graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cutOff);
  }
}
