import os from 'node:os';
import { Piscina } from 'piscina';
import type { ContextSeries, ForecastTask, GlobalBatchOptions } from '../models/types.ts';
import type { WorkerBatch, WorkerResult } from './local-model-worker.ts';
import { DeadlineTaskQueue, withQueueOptions, type Lane } from './task-queue.ts';

/**
 * A pool of worker threads for model fitting and inference, so a long fit never blocks the event
 * loop. Workers start from a small JavaScript bootstrap that registers tsx and loads the
 * TypeScript task module. Batches waiting for a thread start in the order of task-queue.ts:
 * small interactive requests ahead of large ones and of job chunks.
 */
let pool: Piscina | undefined;

export function workerThreads(): number {
  const configured = Number(process.env.MODEL_THREADS);
  return Number.isInteger(configured) && configured > 0 ? configured : Math.max(1, os.availableParallelism());
}

function getPool(): Piscina {
  if (!pool) {
    const threads = workerThreads();
    pool = new Piscina({
      filename: new URL('./worker-bootstrap.mjs', import.meta.url).href,
      workerData: { taskModule: new URL('./local-model-worker.ts', import.meta.url).href },
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: 60_000,
      taskQueue: new DeadlineTaskQueue(),
    });
  }
  return pool;
}

/** Runs the tasks of one local model across the pool, in chunks, keeping the input order. */
export async function runLocalTasks(model: string, tasks: ForecastTask[], lane: Lane = 'interactive'): Promise<WorkerResult[]> {
  if (tasks.length === 0) return [];
  const p = getPool();
  // A few chunks per thread balance uneven fit times without paying a message per task.
  const chunkSize = Math.max(1, Math.ceil(tasks.length / (p.options.maxThreads * 4)));
  const chunks: Promise<WorkerResult[]>[] = [];
  for (let start = 0; start < tasks.length; start += chunkSize) {
    const batch: WorkerBatch = { model, tasks: tasks.slice(start, start + chunkSize) };
    chunks.push(p.run(withQueueOptions(batch, { lane, requestSize: tasks.length })));
  }
  return (await Promise.all(chunks)).flat();
}

/**
 * Runs a global model's tasks, in input order. Coupled tasks (the model learns across them) are
 * one batch on one worker thread; independent ones are split into one contiguous batch per
 * thread, so a large request uses every core while each batch stays large for the model.
 */
export async function runGlobalBatch(
  model: string,
  tasks: ForecastTask[],
  context: ContextSeries[],
  options: GlobalBatchOptions = {},
  coupled = true,
  lane: Lane = 'interactive',
): Promise<WorkerResult[]> {
  if (tasks.length === 0) return [];
  const p = getPool();
  const size = coupled ? tasks.length : Math.ceil(tasks.length / p.options.maxThreads);
  const batches: Promise<WorkerResult[]>[] = [];
  for (let start = 0; start < tasks.length; start += size) {
    const batch: WorkerBatch = { model, tasks: tasks.slice(start, start + size), context, options };
    batches.push(p.run(withQueueOptions(batch, { lane, requestSize: tasks.length })));
  }
  return (await Promise.all(batches)).flat();
}

export async function closeWorkerPool(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.destroy();
}
