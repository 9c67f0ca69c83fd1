import { Piscina, type PiscinaTask } from 'piscina';
import { expect, test } from 'vitest';
import { DeadlineTaskQueue, virtualDeadline, type QueueOptions } from '../../engine/threads/queue-order.ts';

/** A queued task as piscina hands it over: the run() argument's queue options behind the symbol. */
const task = (name: string, options?: QueueOptions) => ({ name, [Piscina.queueOptionsSymbol]: options ?? null }) as unknown as PiscinaTask;
const drain = (q: DeadlineTaskQueue) => {
  const out: string[] = [];
  for (let t = q.shift(); t; t = q.shift()) out.push((t as unknown as { name: string }).name);
  return out;
};

test('a small interactive request starts before the queued batches of a large one and of a job', () => {
  let now = 0;
  const q = new DeadlineTaskQueue(() => now);
  for (let k = 0; k < 4; k++) q.push(task(`big-${k}`, { lane: 'interactive', requestSize: 400 }));
  for (let k = 0; k < 2; k++) q.push(task(`job-${k}`, { lane: 'background', requestSize: 64 }));
  now = 500;
  q.push(task('small', { lane: 'interactive', requestSize: 1 }));
  expect(q.size).toBe(7);
  expect(drain(q)).toEqual(['small', 'big-0', 'big-1', 'big-2', 'big-3', 'job-0', 'job-1']);
});

test('nothing waits forever: a queued batch goes ahead of requests that arrive after its deadline', () => {
  let now = 0;
  const q = new DeadlineTaskQueue(() => now);
  q.push(task('job', { lane: 'background', requestSize: 64 }));
  now = virtualDeadline(0, { lane: 'background', requestSize: 64 }) + 1;
  q.push(task('late-small', { lane: 'interactive', requestSize: 1 }));
  expect(drain(q)).toEqual(['job', 'late-small']);
});

test('batches of the same deadline keep their arrival order; removal takes the one named', () => {
  const q = new DeadlineTaskQueue(() => 0);
  const [a, b, c] = ['a', 'b', 'c'].map((n) => task(n, { lane: 'interactive', requestSize: 8 }));
  q.push(a);
  q.push(b);
  q.push(c);
  q.remove(b);
  expect(drain(q)).toEqual(['a', 'c']);
  q.push(task('plain')); // a task without options is ordered by its arrival alone
  expect(drain(q)).toEqual(['plain']);
});
