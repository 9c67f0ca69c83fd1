import { randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ScheduleService } from '../../api/schedules/schedule-service.ts';
import { AUTH, testConfig, testServer } from '../api/helpers.ts';
import { query, serviceInput, scheduleCalls, startScheduleStack } from './schedule-helpers.ts';
import { until, type JobsStack } from './temporal-env.ts';

/**
 * Schedules on several API replicas sharing one job store and one Temporal (docs/decisions/096):
 * Temporal names a triggered run by the second it is taken and a due run by its due second, so
 * triggers take turns through the store and keep clear of due runs; a schedule Temporal lost is
 * made again by whichever replica reads it first.
 */

const QUEUE = 'schedule-replicas';
let stack: JobsStack;
let app: FastifyInstance;
const { create, get, trigger, runs } = scheduleCalls(() => app);

beforeAll(async () => {
  ({ stack } = await startScheduleStack(QUEUE));
  app = stack.app;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('triggers', () => {
  test('two triggers in a row make two runs (Temporal names a run by the second it starts)', async () => {
    const id = (await create({ query: query('daily/*.parquet'), spec: { cron: '0 6 * * 1', time_zone: 'Europe/Berlin' }, paused: true })).json().schedule_id;
    for (let k = 0; k < 2; k++) expect((await trigger(id)).statusCode).toBe(202);
    await until(async () => (await runs(id)).filter((r) => r.status === 'completed').length === 2, 60_000, 'two triggered runs');
  }, 90_000);

  test('triggers reaching two replicas at once make a run each: the replicas take turns through the job store', async () => {
    const id = (await create({ query: query('daily/*.parquet'), spec: { cron: '0 6 * * 1' }, paused: true })).json().schedule_id;
    // Another API replica: a service of its own on the same job store and Temporal.
    const replica = new ScheduleService(stack.jobService(QUEUE, 2), testConfig().schedules);
    const triggered = await Promise.all([
      ...[0, 1].map(() => trigger(id).then((r) => r.statusCode)),
      ...[0, 1].map(() => replica.trigger(id, 'alice').then(() => 202)),
    ]);
    expect(triggered).toEqual([202, 202, 202, 202]);
    const done = await until(async () => (await runs(id)).filter((r) => r.status === 'completed').length === 4 && runs(id), 90_000, 'four triggered runs');
    expect(new Set((await done).map((r) => r.job_id)).size).toBe(4);
  }, 120_000);

  test('a trigger at the second a run is due makes a run of its own, and the due run still starts', async () => {
    const id = (await create({ query: query('daily/*.parquet'), spec: { interval: '10s' } })).json().schedule_id;
    const due = Date.parse((await get(`/v1-beta/forecast-schedules/${id}`)).json().next_runs[0]);
    await new Promise((r) => setTimeout(r, due - Date.now() + 100));
    expect((await trigger(id)).statusCode).toBe(202);
    await app.inject({ method: 'PATCH', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH, payload: { paused: true } });
    const done = await until(
      async () => (await runs(id)).filter((r) => r.status === 'completed').length >= 2 && runs(id),
      60_000,
      'the due run and the triggered one',
    );
    const times = (await done).map((r) => Date.parse(r.scheduled_at)).sort();
    expect(times[0]).toBe(due);
    // The triggered run, named by a later second than the due one's; the next due run would be 10 s on.
    expect(times[1]).toBeGreaterThanOrEqual(due + 1000);
    expect(times[1]).toBeLessThan(due + 5000);
  }, 90_000);

  test('a trigger that cannot take its turn within 15 s is 429 too_many_submissions, and starts nothing', async () => {
    const id = (await create({ query: query('daily/*.parquet'), spec: { cron: '0 6 * * 1' }, paused: true })).json().schedule_id;
    const store = stack.jobService(QUEUE, 2).store.schedules;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let taken = () => {};
    const holding = new Promise<void>((resolve) => (taken = resolve));
    // Another replica holds the schedule's lock for longer than a trigger waits.
    const holder = store.locked(id, async () => {
      taken();
      await held;
    });
    await holding;
    const refused = await trigger(id);
    release();
    await holder;
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ status: 429, code: 'too_many_submissions' });
    expect(await stack.env.client.schedule.getHandle(id).describe()).toMatchObject({ info: { numActionsTaken: 0 } });
    expect(await runs(id)).toEqual([]);
  }, 60_000);
});

describe('changes, removals and a schedule Temporal has not got', () => {
  test('a change, a listing and a removal at once, on two replicas: the schedule ends removed, in the store and in Temporal', async () => {
    const replica = await testServer(testConfig(), undefined, stack.jobService(QUEUE, 2), stack.engine);
    for (let k = 0; k < 3; k++) {
      const id = (await create({ query: query('daily/*.parquet'), spec: { interval: '1h' } })).json().schedule_id;
      const url = `/v1-beta/forecast-schedules/${id}`;
      const [patched, listed, removed] = await Promise.all([
        app.inject({ method: 'PATCH', url, headers: AUTH, payload: { paused: true } }),
        app.inject({ method: 'GET', url: '/v1-beta/forecast-schedules', headers: AUTH }),
        replica.inject({ method: 'DELETE', url, headers: AUTH }),
      ]);
      expect(removed.statusCode).toBe(200);
      expect([200, 404]).toContain(patched.statusCode);
      expect(listed.statusCode).toBe(200);
      expect((await get(url)).statusCode).toBe(404);
      await expect(stack.env.client.schedule.getHandle(id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    }
    await replica.close();
  });

  test('a restarted API still has every schedule, and one Temporal lost is made again from its record', async () => {
    const id = (await create({ query: query('daily/*.parquet'), spec: { interval: '1h' } })).json().schedule_id;
    const restarted = await testServer(testConfig(), undefined, stack.jobService(QUEUE, 2), stack.engine);
    await stack.env.client.schedule.getHandle(id).delete();
    const res = await restarted.inject({ method: 'GET', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH });
    expect(res.statusCode).toBe(200);
    expect(res.json().next_runs.length).toBeGreaterThan(0);
    expect((await stack.env.client.schedule.getHandle(id).describe()).scheduleId).toBe(id);

    // Lost again, then read by two replicas at once: both make it, one finds it made, both answer.
    await stack.env.client.schedule.getHandle(id).delete();
    const both = await Promise.all(
      [app, restarted].map((replica) => replica.inject({ method: 'GET', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH })),
    );
    expect(both.map((r) => r.statusCode)).toEqual([200, 200]);
    expect((await stack.env.client.schedule.getHandle(id).describe()).scheduleId).toBe(id);
    await restarted.close();
  });

  test("a schedule being made, listed by another replica before Temporal has it: that replica makes it, and the maker's 201 stands", async () => {
    const maker = new ScheduleService(stack.jobService(QUEUE, 2), testConfig().schedules);
    const lister = new ScheduleService(stack.jobService(QUEUE, 2), testConfig().schedules);
    const input = serviceInput('1h');
    const id = randomUUID();
    // The maker's record is in the store; the lister reads it and makes Temporal's schedule from it.
    const now = new Date().toISOString();
    await stack.jobService(QUEUE, 2).store.schedules.create({ schedule_id: id, principal: 'carol', ...input, created_at: now, updated_at: now });
    expect((await lister.list('carol')).map((s) => s.schedule_id)).toEqual([id]);
    // The maker goes on to make Temporal's schedule, and finds it made.
    const made = await maker.create('carol', input, 0, id);
    expect(made.schedule_id).toBe(id);
    expect((await maker.get(id, 'carol')).next_runs.length).toBeGreaterThan(0);
    await maker.remove(id, 'carol');
  });
});
