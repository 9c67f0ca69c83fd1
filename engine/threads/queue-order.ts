import { Piscina, type PiscinaTask, type TaskQueue } from 'piscina';

/**
 * The order in which batches waiting for a model thread start: earliest virtual deadline first.
 * A batch's deadline is its arrival time plus a delay that grows with the size of the request it
 * belongs to (10 ms per forecast, up to a minute) and, for background work (job chunks),
 * a further 10 seconds. So a one-series request sent while a large request or a job fills the
 * threads starts as soon as a thread is free instead of after everything queued before it, and
 * nothing waits forever: every queued batch's deadline eventually comes before new arrivals'.
 */

export type Lane = 'interactive' | 'background';

export interface QueueOptions {
  lane: Lane;
  /** Forecasts in the whole request (or job chunk) the batch belongs to. */
  requestSize: number;
}

const MS_PER_FORECAST = 10;
const MAX_SIZE_DELAY_MS = 60_000;
const BACKGROUND_DELAY_MS = 10_000;

export function virtualDeadline(arrival: number, options: QueueOptions | null): number {
  if (!options) return arrival;
  const sizeDelay = Math.min(MAX_SIZE_DELAY_MS, options.requestSize * MS_PER_FORECAST);
  return arrival + sizeDelay + (options.lane === 'background' ? BACKGROUND_DELAY_MS : 0);
}

/** Marks a batch for the queue (the options are read here and never sent to the worker). */
export function withQueueOptions<T extends object>(batch: T, options: QueueOptions): T {
  return Object.assign(batch, { [Piscina.queueOptionsSymbol]: options });
}

interface Entry {
  task: PiscinaTask;
  deadline: number;
  sequence: number;
}

export class DeadlineTaskQueue implements TaskQueue {
  private readonly entries: Entry[] = [];
  private sequence = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  get size(): number {
    return this.entries.length;
  }

  push(task: PiscinaTask): void {
    const options = (task as unknown as Record<symbol, QueueOptions | null | undefined>)[Piscina.queueOptionsSymbol] ?? null;
    const entry = { task, deadline: virtualDeadline(this.now(), options), sequence: this.sequence++ };
    // Kept sorted by (deadline, arrival): queues hold a few batches per thread, so a linear insert
    // is cheaper than a heap's bookkeeping.
    let at = this.entries.length;
    while (at > 0 && before(entry, this.entries[at - 1])) at--;
    this.entries.splice(at, 0, entry);
  }

  shift(): PiscinaTask | null {
    return this.entries.shift()?.task ?? null;
  }

  remove(task: PiscinaTask): void {
    const at = this.entries.findIndex((e) => e.task === task);
    if (at >= 0) this.entries.splice(at, 1);
  }
}

const before = (a: Entry, b: Entry) => a.deadline < b.deadline || (a.deadline === b.deadline && a.sequence < b.sequence);
