import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type NativeConnectionOptions } from '@temporalio/worker';
import type { Engine } from '../engine/engine.ts';
import type { JobStore } from '../store/job-store.ts';
import { createActivities, type ActivityDependencies } from './forecast-job.ts';
import { createScheduleActivities } from './scheduled-runs.ts';

export interface WorkerOptions {
  address: string;
  /** TLS and a client certificate, or false for plaintext (docs/deployment.md, "A secured Temporal"). */
  tls?: NativeConnectionOptions['tls'];
  /** A Temporal Cloud API key, sent on every call. */
  apiKey?: string;
  namespace: string;
  taskQueue: string;
  forecastsPerChunk: number;
  /** SCHEDULE_WEBHOOK_HOSTS: the hosts scheduled runs may call back (none by default). */
  webhookHosts?: readonly string[];
  /**
   * SHUTDOWN_GRACE: once asked to stop, how long running chunks may finish; then they are
   * cancelled and Temporal retries them on another worker. Unset: Temporal's 0 (at once).
   */
  shutdownGraceMs?: number;
  /** The workflow code to run; unset, this deployment's own (`jobWorkflowCode`). */
  workflowCode?: WorkflowCode;
}

/** A worker's workflow code: sources bundled as it starts, or a bundle `npm run build` made beforehand. */
export type WorkflowCode = { workflowsPath: string } | { workflowBundle: { codePath: string } };

/** The workflows' sources (jobs and scheduled runs); `npm run build` bundles them into `JOB_WORKFLOW_BUNDLE`. */
export const JOB_WORKFLOW_SOURCE = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
/** The bundle's path inside the build's output folder. */
export const JOB_WORKFLOW_BUNDLE = 'workflows/job-workflows.bundle.js';

/**
 * Compiled by `npm run build`, this module runs the prebuilt bundle, so a production worker needs
 * no bundler or TypeScript at start; run from the sources, it bundles them as it starts.
 */
export function jobWorkflowCode(): WorkflowCode {
  if (import.meta.url.endsWith('.ts')) return { workflowsPath: JOB_WORKFLOW_SOURCE };
  return { workflowBundle: { codePath: fileURLToPath(new URL(`../${JOB_WORKFLOW_BUNDLE}`, import.meta.url)) } };
}

/** How long past the grace a stopping worker may take before `run()` gives up on it (it then rejects). */
const FORCE_AFTER_GRACE_MS = 10_000;

/**
 * A Temporal worker for forecast jobs: wiring only. Activities fit models on the engine's model
 * threads, so it takes about as many chunks at once as there are threads.
 */
export async function createJobWorker(options: WorkerOptions, engine: Engine, store: JobStore, beta: ActivityDependencies['beta']): Promise<Worker> {
  const connection = await NativeConnection.connect({ address: options.address, tls: options.tls, ...(options.apiKey ? { apiKey: options.apiKey } : {}) });
  const graceMs = options.shutdownGraceMs ?? 0;
  return Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.workflowCode ?? jobWorkflowCode()),
    activities: {
      ...createActivities({ engine, store, forecastsPerChunk: options.forecastsPerChunk, beta }),
      ...createScheduleActivities({ store, webhookHosts: options.webhookHosts ?? [] }),
    },
    // One chunk per model thread keeps every thread busy; more would only queue inside the pool.
    maxConcurrentActivityTaskExecutions: engine.threads.size + 1,
    // After the grace the running chunks are cancelled; they give up at once (activities/forecast-job.ts),
    // so the force time only bounds a worker that hangs for some other reason.
    shutdownGraceTime: graceMs,
    shutdownForceTime: graceMs + FORCE_AFTER_GRACE_MS,
  });
}
