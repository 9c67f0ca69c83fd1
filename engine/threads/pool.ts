import { Piscina } from 'piscina';
import type { ContextSeries, ForecastTask, GlobalBatchOptions, ModelSettings } from '../../models/contract/model-interface.ts';
import { watchQueueDepth } from '../../telemetry/prometheus-metrics.ts';
import { DeadlineTaskQueue, withQueueOptions, type Lane } from './queue-order.ts';
import { joinMemberRuns, type MemberRun, type MemberRunner } from '../../models/families/ensemble/members.ts';
import { LoadedModels, runBatch, type MemberBatch, type MemberShare, type ThreadBatch, type ThreadResult } from './batch.ts';
import type { ThreadData } from './model-thread.ts';

/**
 * The worker threads that fit and run models, so a long fit never blocks the event loop. Threads
 * start from a small JavaScript bootstrap that loads the task module (registering tsx first when it is TypeScript),
 * with the model settings in their workerData (they read no environment). They start on first
 * use, and batches waiting for a thread start in the order of queue-order.ts: small interactive
 * requests ahead of large ones and of job chunks.
 */
/** The process's pool of model threads, started on first use and shared by every view of it. */
class LazyPool {
  private pool: Piscina | undefined;
  private unwatch: (() => void) | undefined;
  /** The execution provider each ONNX Runtime model's sessions last ran on, as its batches report it. */
  readonly executionProviders = new Map<string, string>();
  /** Models the event loop loads itself: an ensemble, which hands its members to the threads. */
  readonly here: LoadedModels;

  constructor(
    readonly size: number,
    readonly models: ModelSettings,
  ) {
    this.here = new LoadedModels(models);
  }

  get threads(): Piscina {
    if (!this.pool) {
      // The task module in this module's own form: TypeScript from the sources, JavaScript once built.
      const taskModule = new URL(import.meta.url.endsWith('.ts') ? './model-thread.ts' : './model-thread.js', import.meta.url).href;
      const workerData: ThreadData = { taskModule, models: this.models };
      this.pool = new Piscina({
        filename: new URL('./bootstrap.mjs', import.meta.url).href,
        workerData,
        minThreads: this.size,
        maxThreads: this.size,
        idleTimeout: 60_000,
        taskQueue: new DeadlineTaskQueue(),
      });
      const pool = this.pool;
      this.unwatch = watchQueueDepth(() => pool.queueSize);
    }
    return this.pool;
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    this.unwatch?.();
    await pool?.destroy();
  }
}

export class ModelThreads {
  private readonly home: LazyPool;

  constructor(
    readonly size: number,
    models: ModelSettings,
    private readonly signal?: AbortSignal,
    home?: LazyPool,
  ) {
    this.home = home ?? new LazyPool(size, models);
  }

  /**
   * The same threads, for batches that `signal` cancels: once it aborts, their batches still
   * waiting are dropped and a thread running one is stopped (and replaced), so a cancelled job's
   * chunk stops computing and frees its threads for the next work at once.
   */
  withSignal(signal: AbortSignal): ModelThreads {
    return new ModelThreads(this.size, this.home.models, signal, this.home);
  }

  private async run(batch: ThreadBatch, lane: Lane, requestSize: number): Promise<ThreadResult[]> {
    const results: ThreadResult[] = await this.home.threads.run(withQueueOptions(batch, { lane, requestSize }), { signal: this.signal });
    const provider = results.find((r) => r.ok && r.executionProvider);
    if (provider?.ok && provider.executionProvider) this.home.executionProviders.set(batch.model, provider.executionProvider);
    return results;
  }

  /** The execution provider a model's sessions ran on in these threads; null before one ran, or for a model not run by ONNX Runtime. */
  executionProviderOf(model: string): string | null {
    return this.home.executionProviders.get(model) ?? null;
  }

  /** Runs the tasks of one local model across the threads, in chunks, keeping the input order. */
  async runLocal(model: string, tasks: ForecastTask[], lane: Lane = 'interactive'): Promise<ThreadResult[]> {
    if (tasks.length === 0) return [];
    const chunkSize = this.localChunkSize(tasks.length);
    const chunks: Promise<ThreadResult[]>[] = [];
    for (let start = 0; start < tasks.length; start += chunkSize) {
      const batch: ThreadBatch = { model, tasks: tasks.slice(start, start + chunkSize) };
      chunks.push(this.run(batch, lane, tasks.length));
    }
    return (await Promise.all(chunks)).flat();
  }

  /** A local model's tasks per chunk: a few chunks per thread balance uneven fit times without paying a message per task. */
  private localChunkSize(count: number): number {
    return Math.max(1, Math.ceil(count / (this.size * 4)));
  }

  /**
   * Runs a global model's tasks, in input order. Coupled tasks (the model learns across them) are
   * one batch on one thread; independent ones are split into one contiguous batch per thread, so
   * a large request uses every core while each batch stays large for the model.
   */
  async runGlobal(
    model: string,
    tasks: ForecastTask[],
    context: ContextSeries[],
    options: GlobalBatchOptions = {},
    coupled = true,
    lane: Lane = 'interactive',
  ): Promise<ThreadResult[]> {
    if (tasks.length === 0) return [];
    const size = coupled ? tasks.length : Math.ceil(tasks.length / this.size);
    const batches: Promise<ThreadResult[]>[] = [];
    for (let start = 0; start < tasks.length; start += size) {
      const batch: ThreadBatch = { model, tasks: tasks.slice(start, start + size), context, options };
      batches.push(this.run(batch, lane, tasks.length));
    }
    return (await Promise.all(batches)).flat();
  }

  /**
   * Runs a model that combines others (the ensemble): its members fit on the threads, each local
   * member's tasks in a few shares per thread, a global member's in one share, every member at
   * once; the event loop combines what they hand back. One thread would otherwise fit every member
   * of a coupled request alone. The forecasts are those of the whole batch on one thread.
   */
  async runCombining(
    model: string,
    tasks: ForecastTask[],
    context: ContextSeries[],
    options: GlobalBatchOptions = {},
    lane: Lane = 'interactive',
  ): Promise<ThreadResult[]> {
    if (tasks.length === 0) return [];
    // A thread's own failure (stopped, cancelled) is the batch's, as for one batch on a thread:
    // it rejects, so that a job's chunk is retried or cancelled, not failed as the model's.
    const lost: unknown[] = [];
    const share = async (batch: MemberBatch): Promise<MemberRun> => {
      let result: MemberShare;
      try {
        result = await this.home.threads.run(withQueueOptions(batch, { lane, requestSize: tasks.length }), { signal: this.signal });
      } catch (error) {
        lost.push(error);
        throw error;
      }
      if ('failure' in result) throw new Error(result.failure);
      return result.run;
    };
    const runner: MemberRunner = async (member, memberTasks, cuts, memberContext, settings) => {
      const global = 'forecastBatch' in member.model;
      const size = global ? memberTasks.length : this.localChunkSize(memberTasks.length);
      const shares: Promise<MemberRun>[] = [];
      for (let start = 0; start < memberTasks.length; start += size) {
        const batch: MemberBatch = {
          member: member.name,
          tasks: memberTasks.slice(start, start + size),
          cuts: cuts.slice(start, start + size),
          context: global ? memberContext : [],
          settings,
        };
        shares.push(share(batch));
      }
      return joinMemberRuns(await Promise.all(shares));
    };
    const results = await runBatch(this.home.here, { model, tasks, context, options }, runner);
    if (lost.length > 0) throw lost[0];
    return results;
  }

  /** Whether the event loop holds this model (an ensemble, once it ran or was warmed here). */
  holdsHere(model: string): boolean {
    return this.home.here.holds(model);
  }

  /** Stops the threads (of every view: close the engine that made them, once). */
  close(): Promise<void> {
    return this.home.close();
  }
}
