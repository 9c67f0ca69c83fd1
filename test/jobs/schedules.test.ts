import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { ScheduleNotFoundError } from '@temporalio/client';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ScheduleService } from '../../api/schedules/schedule-service.ts';
import { AUTH, testConfig } from '../api/helpers.ts';
import { writeParquet } from '../beta/helpers.ts';
import { query, serviceInput, sales, scheduleCalls, startScheduleStack } from './schedule-helpers.ts';
import { until, type JobsStack } from './temporal-env.ts';

/**
 * Scheduled backtests on a real Temporal dev server: schedules made, read, changed, triggered,
 * paused and deleted through the API; every run an ordinary beta job over the data its locator
 * finds then; the webhook called on loopback, signed; refusals named by field.
 */

const BOB = { authorization: 'Bearer test-key-bob' };
const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
let failNext = 0;
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    received.push({ headers: req.headers, body });
    res.statusCode = failNext-- > 0 ? 503 : 204;
    res.end();
  });
});
let stack: JobsStack;
let app: FastifyInstance;
let root: string;
let hook: string;
const { create, get, runs } = scheduleCalls(() => app);

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as { port: number }).port;
  hook = `http://127.0.0.1:${port}/hook`;
  ({ stack, root } = await startScheduleStack('schedules', {
    SCHEDULE_WEBHOOK_HOSTS: `127.0.0.1:${port}`,
    QUOTA_OVERRIDES: JSON.stringify({ bob: { schedules: 1 } }),
  }));
  app = stack.app;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  receiver.close();
});

describe('a schedule over a folder that grows', () => {
  test('each run is a beta job whose cutoffs follow the data it found, its rows naming the schedule and the run', async () => {
    const res = await create({ query: query('daily/*.parquet'), spec: { interval: '3s' }, webhook: { url: hook }, alert: { metric: 'mae', above: 0 } });
    expect(res.statusCode).toBe(201);
    const schedule = res.json();
    expect(res.headers.location).toBe(`/v1-beta/forecast-schedules/${schedule.schedule_id}`);
    expect(schedule.webhook.secret).toMatch(/^[\w-]{40,}$/);
    expect(schedule.next_runs.length).toBeGreaterThan(0);
    const id = schedule.schedule_id;

    const first = await until(async () => (await runs(id)).find((r) => r.status === 'completed'), 60_000, 'a completed run');
    // Written aside and moved in, so that no run reads half a file.
    await writeParquet(path.join(root, 'part-2.parquet'), sales(13).replace('range(13)', 'range(10, 13)'));
    fs.renameSync(path.join(root, 'part-2.parquet'), path.join(root, 'daily', 'part-2.parquet'));
    const written = Date.now();
    const later = await until(
      async () => (await runs(id)).find((r) => r.status === 'completed' && Date.parse(r.started_at) > written),
      60_000,
      'a run after the new file',
    );
    await app.inject({ method: 'PATCH', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH, payload: { paused: true } });

    const cutoffs = async (jobId: string) => {
      const job = await get(`/v1-beta/forecast-jobs/${jobId}`);
      expect(job.json().status).toBe('completed');
      const file = path.join(root, `${jobId}.parquet`);
      fs.writeFileSync(file, (await get(`/v1-beta/forecast-jobs/${jobId}/metrics.parquet`)).rawPayload);
      const db = await DuckDBInstance.create();
      const c = await db.connect();
      const rows = (
        await c.runAndReadAll(`SELECT DISTINCT strftime(cutoff, '%Y-%m-%d') AS cutoff, schedule_id, scheduled_at IS NOT NULL AS at FROM '${file}' ORDER BY 1`)
      ).getRowObjectsJS();
      c.closeSync();
      db.closeSync();
      return rows;
    };
    const firstRows = await cutoffs(first.job_id);
    const laterRows = await cutoffs(later.job_id);
    // Two cutoffs every day, counted back from the data's end: 2024-01-09/10 for 10 days, then 01-12/13.
    expect(firstRows.map((r) => r.cutoff)).toEqual(['2024-01-09', '2024-01-10']);
    expect(laterRows.map((r) => r.cutoff)).toEqual(['2024-01-12', '2024-01-13']);
    expect(new Set([...firstRows, ...laterRows].map((r) => r.schedule_id))).toEqual(new Set([id]));
    expect([...firstRows, ...laterRows].every((r) => r.at)).toBe(true);

    // The webhook: a signed summary of a finished run, with the alert crossed (any error is above 0).
    const call = await until(async () => received.find((r) => JSON.parse(r.body).job_id === first.job_id), 30_000, 'the webhook call');
    const summary = JSON.parse(call.body);
    expect(summary).toMatchObject({ event: 'scheduled_run.finished', schedule_id: id, status: 'completed', alert: { metric: 'mae', above: 0, crossed: true } });
    expect(summary.metrics[0]).toMatchObject({ model: 'naive', target: 'sales' });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(call.headers['forecast-signature']))!;
    expect(v1).toBe(createHmac('sha256', schedule.webhook.secret).update(`${t}.${call.body}`).digest('hex'));
  }, 150_000);
});

describe('pause, trigger, overlap and delete', () => {
  test('a paused schedule makes no run until triggered; a trigger runs one at once', async () => {
    const res = await create({ query: query('daily/*.parquet'), spec: { cron: '0 6 * * 1', time_zone: 'Europe/Berlin' }, paused: true });
    const id = res.json().schedule_id;
    expect(res.json()).toMatchObject({ paused: true, next_runs: [], spec: { cron: ['0 6 * * 1'], time_zone: 'Europe/Berlin' } });
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await runs(id)).toEqual([]);
    // JSON headers with an empty body, as some clients send on every call: a trigger reads no body.
    const trigger = {
      method: 'POST' as const,
      url: `/v1-beta/forecast-schedules/${id}/trigger`,
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: '',
    };
    expect((await app.inject(trigger)).statusCode).toBe(202);
    const run = await until(async () => (await runs(id)).find((r) => r.status === 'completed'), 60_000, 'the triggered run');
    expect((await runs(id)).length).toBe(1);

    // Resumed: the next runs are Mondays at 06:00 Berlin time.
    const resumed = (await app.inject({ method: 'PATCH', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH, payload: { paused: false } })).json();
    expect(resumed.paused).toBe(false);
    for (const at of resumed.next_runs) {
      const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit' }).format(new Date(at));
      expect(berlin).toBe('Mon 06:00');
    }

    // Deleted: Temporal's schedule is gone; the run's job and results stay.
    expect((await app.inject({ method: 'DELETE', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH })).json()).toEqual({
      schedule_id: id,
      status: 'deleted',
    });
    await expect(stack.env.client.schedule.getHandle(id).describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await get(`/v1-beta/forecast-schedules/${id}`)).statusCode).toBe(404);
    expect((await get(`/v1-beta/forecast-jobs/${run.job_id}`)).json().status).toBe('completed');
  }, 90_000);

  test('a schedule Temporal lost is put back by ensureAll, as the API does at start, without waiting for a read', async () => {
    const service = new ScheduleService(stack.jobService('schedules-idle', 1), testConfig().schedules);
    const schedule = await service.create('alice', { ...serviceInput('1h'), paused: true }, 0);
    const handle = stack.env.client.schedule.getHandle(schedule.schedule_id);
    await handle.delete();
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect(await service.ensureAll()).toEqual([]);
    expect((await handle.describe()).state.paused).toBe(true);
    await service.remove(schedule.schedule_id, 'alice');
  });

  test('with overlap skip, a run that is still going makes the next ones skip', async () => {
    // No worker polls this queue, so the first run cannot finish: it is as slow as a run gets.
    const service = new ScheduleService(stack.jobService('schedules-idle', 1), testConfig().schedules);
    const input = serviceInput('1s');
    const schedule = await service.create('alice', input, 0);
    await new Promise((r) => setTimeout(r, 4_500));
    const described = await stack.env.client.schedule.getHandle(schedule.schedule_id).describe();
    expect(described.info.runningActions.length).toBe(1);
    expect(described.info.numActionsSkippedOverlap).toBeGreaterThanOrEqual(2);
    expect((await service.get(schedule.schedule_id, 'alice')).overlap_skipped).toBeGreaterThanOrEqual(2);
    await service.remove(schedule.schedule_id, 'alice');
    for (const action of described.info.runningActions) await stack.env.client.workflow.getHandle(action.workflow.workflowId).terminate();
  }, 30_000);
});

describe('the webhook', () => {
  test('a call the receiver fails is made again by Temporal, with backoff; a run below the alert is not marked', async () => {
    const secret = 'a-secret-the-owner-chose';
    const res = await create({
      query: query('daily/*.parquet'),
      spec: { interval: '1h' },
      paused: true,
      webhook: { url: hook, secret },
      alert: { metric: 'mae', above: 1e9 },
    });
    expect(res.json().webhook).toEqual({ url: hook });
    const id = res.json().schedule_id;
    failNext = 1;
    await app.inject({ method: 'POST', url: `/v1-beta/forecast-schedules/${id}/trigger`, headers: AUTH });
    const calls = await until(
      async () => {
        const mine = received.filter((r) => JSON.parse(r.body).schedule_id === id);
        return mine.length >= 2 && mine;
      },
      60_000,
      'the webhook called twice',
    );
    expect(calls[0].body).toBe(calls[1].body);
    const summary = JSON.parse(calls[1].body);
    expect(summary.alert).toEqual({ metric: 'mae', above: 1e9, crossed: false });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(calls[1].headers['forecast-signature']))!;
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${calls[1].body}`).digest('hex'));
    const [run] = await runs(id);
    expect(run).toMatchObject({ status: 'completed', alerted: false });
    await app.inject({ method: 'DELETE', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH });
  }, 90_000);

  test("a receiver that keeps failing does not hold the run open: the run ends, and the overlap policy does not wait on the summary's retries", async () => {
    const res = await create({ query: query('daily/*.parquet'), spec: { interval: '1h' }, paused: true, webhook: { url: hook } });
    const id = res.json().schedule_id;
    failNext = 1_000;
    try {
      await app.inject({ method: 'POST', url: `/v1-beta/forecast-schedules/${id}/trigger`, headers: AUTH });
      const client = stack.env.client;
      const runId = await until(
        async () => (await client.schedule.getHandle(id).describe()).info.recentActions[0]?.action.workflow.workflowId,
        30_000,
        'the run',
      );
      // The run's workflow completes while its summary is refused: a schedule with overlap `skip` could start the next run now.
      await until(async () => (await client.workflow.getHandle(runId).describe()).status.name === 'COMPLETED', 60_000, 'the run to end');
      await until(async () => received.some((r) => JSON.parse(r.body).schedule_id === id), 30_000, 'a first delivery');
      const delivery = client.workflow.getHandle(`${runId}-webhook`);
      expect((await delivery.describe()).status.name).toBe('RUNNING');
      expect((await client.schedule.getHandle(id).describe()).info.runningActions).toEqual([]);
      // Once the receiver answers, a retry delivers the summary and the delivery ends.
      failNext = 0;
      await delivery.result();
      expect(JSON.parse(received.filter((r) => JSON.parse(r.body).schedule_id === id).at(-1)!.body)).toMatchObject({ status: 'completed', schedule_id: id });
    } finally {
      failNext = 0;
      await app.inject({ method: 'DELETE', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH });
    }
  }, 120_000);
});

describe('failures as a job would have them', () => {
  test('a run whose locator matches nothing fails with the code and message a job gets', async () => {
    const id = (await create({ query: query('nothing-here/*.parquet'), spec: { interval: '1h' }, paused: true })).json().schedule_id;
    await app.inject({ method: 'POST', url: `/v1-beta/forecast-schedules/${id}/trigger`, headers: AUTH });
    const run = await until(async () => (await runs(id)).find((r) => r.status === 'failed'), 60_000, 'the failed run');

    // A job with the same query is refused at submission, where its locator is first read: the same code and message.
    const boundary = 'b0undary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="query"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(query('nothing-here/*.parquet'))}\r\n--${boundary}--\r\n`;
    const refused = await app.inject({
      method: 'POST',
      url: '/v1-beta/forecast-jobs?model=naive',
      headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: body,
    });
    expect(refused.statusCode).toBe(422);
    expect(run.error).toEqual({ code: refused.json().code, message: refused.json().detail });
    await app.inject({ method: 'DELETE', url: `/v1-beta/forecast-schedules/${id}`, headers: AUTH });
  }, 90_000);
});

describe('the rules', () => {
  test('another principal gets 403 on every schedule route; an unknown id is 404', async () => {
    const id = (await create({ query: query('daily/*.parquet'), spec: { interval: '1h' }, paused: true })).json().schedule_id;
    const base = `/v1-beta/forecast-schedules/${id}`;
    const calls = [
      { method: 'GET', url: base },
      { method: 'PATCH', url: base, payload: { paused: false } },
      { method: 'POST', url: `${base}/trigger` },
      { method: 'GET', url: `${base}/runs` },
      { method: 'DELETE', url: base },
    ] as const;
    for (const call of calls) {
      const res = await app.inject({ ...call, headers: BOB });
      expect(res.statusCode, `${call.method} ${call.url}`).toBe(403);
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    expect((await get('/v1-beta/forecast-schedules', BOB)).json().schedules).toEqual([]);
    expect((await get('/v1-beta/forecast-schedules/00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await get('/v1-beta/forecast-schedules/not-an-id')).statusCode).toBe(404);
    await app.inject({ method: 'DELETE', url: base, headers: AUTH });
  });

  test('bad input is a 422 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query: query('daily/*.parquet'), spec: { cron: '61 * * * *' } }, 'body.spec'],
      // Seconds and years, macros and comments are Temporal's extensions: the documented form is five fields.
      [{ query: query('daily/*.parquet'), spec: { cron: '*/5 * * * * * *' } }, 'body.spec.cron'],
      [{ query: query('daily/*.parquet'), spec: { cron: '@every 5s' } }, 'body.spec.cron'],
      [{ query: query('daily/*.parquet'), spec: { cron: ['0 6 * * 1', '0 6 * * 1 2030'] } }, 'body.spec.cron[1]'],
      [{ query: query('daily/*.parquet'), spec: { cron: '0 6 * * 1', interval: '1d' } }, 'body.spec.interval'],
      [{ query: query('daily/*.parquet'), spec: {} }, 'body.spec.cron'],
      [{ query: query('daily/*.parquet'), spec: { interval: '1mo' } }, 'body.spec.interval'],
      [{ query: query('daily/*.parquet'), spec: { interval: '1d', time_zone: 'Mars/Olympus' } }, 'body.spec.time_zone'],
      [{ query: query('daily/*.parquet'), spec: { interval: '1d' }, overlap: 'sometimes' }, 'body.overlap'],
      [{ query: query('daily/*.parquet'), spec: { interval: '1d' }, catch_up_window: '5s' }, 'body.catch_up_window'],
      [{ query: { ...query('x'), input: { ...query('x').input, source: { uri: 'inline://sales' } } }, spec: { interval: '1d' } }, 'body.query.input.source'],
      [{ query: query('../outside/*.parquet'), spec: { interval: '1d' } }, 'body.query.input.source'],
      [{ query: query('daily/*.parquet'), spec: { interval: '1d' }, webhook: { url: 'http://10.0.0.1/hook' } }, 'body.webhook.url'],
      [{ query: query('daily/*.parquet'), spec: { interval: '1d' }, alert: { metric: 'rmse', above: 1 } }, 'body.alert.metric'],
      [{ query: query('daily/*.parquet', { cutoff: [{ every: '1d', last: 0 }] }), spec: { interval: '1d' } }, 'body.query.cutoff[0]'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(
        res
          .json()
          .errors.map((e: { path: string }) => e.path)
          .some((p: string) => p.startsWith(field)),
        `${field} in ${res.body}`,
      ).toBe(true);
    }
    expect(
      (await get('/v1-beta/forecast-schedules'))
        .json()
        .schedules.every((s: { query: { input: { source: string } } }) => s.query.input.source === 'daily/*.parquet'),
    ).toBe(true);
    // A zone written in other case is read by its canonical name, which the scheduler knows.
    const zoned = await create({ query: query('daily/*.parquet'), spec: { cron: '0 6 * * 1', time_zone: 'europe/berlin' }, paused: true });
    expect(zoned.statusCode, zoned.body).toBe(201);
    expect(zoned.json().spec.time_zone).toBe('Europe/Berlin');
    await app.inject({ method: 'DELETE', url: `/v1-beta/forecast-schedules/${zoned.json().schedule_id}`, headers: AUTH });

    // No schedule route takes query parameters: one sent is refused, not silently dropped.
    const some = (await get('/v1-beta/forecast-schedules')).json().schedules[0].schedule_id;
    for (const url of ['/v1-beta/forecast-schedules?limit=5', `/v1-beta/forecast-schedules/${some}/runs?limit=5`, `/v1-beta/forecast-schedules/${some}?x=1`]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(422);
      expect(res.json().errors[0].path, url).toMatch(/^query/);
    }
  });

  test('PATCH changes the spec, the query and the model, checked as a create is', async () => {
    const id = (await create({ query: query('daily/*.parquet'), spec: { interval: '1h' }, paused: true })).json().schedule_id;
    const url = `/v1-beta/forecast-schedules/${id}`;
    const patch = (payload: Record<string, unknown>) => app.inject({ method: 'PATCH', url, headers: AUTH, payload });
    const changed = await patch({ model: 'aets', spec: { cron: '30 7 * * *', time_zone: 'America/New_York' }, query: query('daily/part-*.parquet') });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ model: 'aets', spec: { cron: ['30 7 * * *'], time_zone: 'America/New_York' }, paused: true });
    expect(changed.json().query.input.source).toBe('daily/part-*.parquet');
    expect(Date.parse(changed.json().updated_at)).toBeGreaterThan(Date.parse(changed.json().created_at));
    const described = await stack.env.client.schedule.getHandle(id).describe();
    expect(described.spec.timezone).toBe('America/New_York');

    const refusals: [Record<string, unknown>, string][] = [
      [{ model: 'no-such-model' }, 'body.model'],
      [{ query: query('../elsewhere/*.parquet') }, 'body.query.input.source'],
      [{ webhook: { url: 'https://example.com/hook' } }, 'body.webhook.url'],
      [{ spec: { cron: 'every day' } }, 'body.spec.cron'],
    ];
    for (const [payload, field] of refusals) {
      const res = await patch(payload);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors[0].path).toBe(field);
    }
    // Nothing of a refused change was kept.
    expect((await get(url)).json()).toMatchObject({ model: 'aets', spec: { cron: ['30 7 * * *'] }, webhook: null });
    await app.inject({ method: 'DELETE', url, headers: AUTH });
  });

  test('an Idempotency-Key makes one schedule; the schedules quota caps each principal', async () => {
    const body = { query: query('daily/*.parquet'), spec: { interval: '1h' }, paused: true, webhook: { url: hook } };
    const headers = { ...BOB, 'idempotency-key': 'schedule-once' };
    const first = await create(body, headers);
    const again = await create(body, headers);
    expect(first.statusCode).toBe(201);
    expect(again.json().schedule_id).toBe(first.json().schedule_id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The secret the server made is in the retry's answer too: the first answer may never have arrived.
    expect(first.json().webhook.secret).toMatch(/^[\w-]{40,}$/);
    expect(again.json().webhook).toEqual(first.json().webhook);
    expect((await get(`/v1-beta/forecast-schedules/${first.json().schedule_id}`, BOB)).json().webhook).toEqual({ url: hook });
    const over = await create(body, BOB);
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ code: 'quota_exceeded', limit: { name: 'schedules', value: 1 } });
  });
});
