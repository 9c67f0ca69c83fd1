import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tempDataDir } from '../api/helpers.ts';
import { freePort } from '../store/minio.ts';
import {
  alive,
  api,
  devServerPid,
  finished,
  killEverything,
  openConnection,
  parseResponse,
  refused,
  requestHead,
  resultRows,
  slowRequest,
  startProcess,
  waitForApi,
} from './service-processes.ts';
import { startTestTemporal, until } from './temporal-env.ts';

/**
 * Graceful shutdown with real processes (docs/operations.md, "Shutdown"): `npm start`'s entry with its embedded
 * Temporal dev server, and `npm run worker`'s beside an API-only service on a shared Temporal.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const timestampMs = (time: { seconds?: unknown; nanos?: number | null }) => Number(time.seconds ?? 0) * 1000 + (time.nanos ?? 0) / 1e6;
const eventMs = (event: temporal.api.history.v1.IHistoryEvent) => timestampMs(event.eventTime ?? {});

afterAll(killEverything);

describe('the service with its embedded Temporal', () => {
  async function embeddedService(dataDir: string, ports: { api: number; temporal: number }) {
    const service = startProcess('bin/server.ts', {
      DATA_DIR: dataDir,
      PORT: String(ports.api),
      HOST: '127.0.0.1',
      TEMPORAL_ADDRESS: '',
      TEMPORAL_DEV_PORT: String(ports.temporal),
      JOB_CHUNK_FORECASTS: '1',
      JOB_PARALLELISM: '4',
    });
    await waitForApi(ports.api);
    return service;
  }

  test('SIGTERM during a synchronous forecast: it is answered in full, later requests are refused, the process exits 0 and its Temporal dev server is gone', async () => {
    const dataDir = tempDataDir();
    const ports = { api: await freePort(), temporal: await freePort() };
    const service = await embeddedService(dataDir, ports);
    const temporalPid = devServerPid(dataDir);
    expect(alive(temporalPid)).toBe(true);

    // A forecast of several seconds, and on a second connection a request whose head has begun.
    const body = JSON.stringify(slowRequest(2, 300));
    const inFlight = await openConnection(ports.api);
    inFlight.socket.write(`${requestHead('POST', '/forecast?model=aarima', body)}\r\n${body}`);
    const late = await openConnection(ports.api);
    late.socket.write(requestHead('GET', '/forecast-jobs'));
    await sleep(1_500);
    service.child.kill('SIGTERM');

    // New connections are refused; the request completed on the open connection is answered 503.
    await until(() => refused(ports.api), 10_000, 'the listener to close');
    late.socket.write('\r\n');
    const refusal = parseResponse(await late.closed);
    expect(refusal.status).toBe(503);
    expect(refusal.headers['content-type']).toContain('application/problem+json');
    expect(refusal.headers.connection).toBe('close');
    expect(refusal.headers['retry-after']).toBe('1');
    expect(JSON.parse(refusal.body)).toMatchObject({ status: 503, code: 'shutting_down' });

    // The forecast in flight is answered in full, then its connection is closed.
    const answer = parseResponse(await inFlight.closed);
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('close');
    const forecast = JSON.parse(answer.body);
    expect(forecast.status).toBe('completed');
    expect(forecast.series).toHaveLength(2);
    for (const serie of forecast.series) expect(serie[0].prediction.mean).toHaveLength(14);

    const exit = await service.exited;
    expect(exit.code, service.stderr()).toBe(0);
    expect(alive(temporalPid)).toBe(false);
  }, 90_000);

  test('SIGTERM mid-job: running chunks finish in the drain, and restarted on the same DATA_DIR the service completes the job with every row once', async () => {
    const dataDir = tempDataDir();
    const ports = { api: await freePort(), temporal: await freePort() };
    const first = await embeddedService(dataDir, ports);
    const series = 10;
    const submitted = await api(ports.api, 'POST', '/forecast-jobs?model=aarima', slowRequest(series, 200));
    expect(submitted.status).toBe(200);
    const id: string = submitted.body.job_id;
    await until(async () => ((await api(ports.api, 'GET', `/forecast-jobs/${id}`)).body.progress?.done ?? 0) >= 2, 60_000, 'progress');
    const temporalPid = devServerPid(dataDir);
    const signalled = Date.now();
    first.child.kill('SIGTERM');
    const exit = await first.exited;
    expect(exit.code, first.stderr()).toBe(0);
    expect(exit.at - signalled).toBeLessThan(25_000);
    expect(alive(temporalPid)).toBe(false);

    const second = await embeddedService(dataDir, ports);
    const done = await finished(ports.api, id, 90_000);
    expect(done.status).toBe('completed');
    expect(done.series).toHaveLength(series);
    expect(await resultRows(dataDir, id)).toEqual({ metrics: series, pairs: series, predictions: series * 14 });

    // Nothing was retried: the chunks running at the signal finished during the drain, reported by the first process.
    const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}` });
    const history = await new Client({ connection }).workflow.getHandle(id).fetchHistory();
    await connection.close();
    const events = history.events ?? [];
    const attempts = events.flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : []));
    expect(attempts.every((a) => a === 1)).toBe(true);
    const finishedInDrain = events.filter((e) => e.activityTaskCompletedEventAttributes?.identity === first.identity && eventMs(e) > signalled);
    expect(finishedInDrain.length).toBeGreaterThan(0);

    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 180_000);
});

describe('with a shared Temporal', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTestTemporal();
  }, 120_000);
  afterAll(async () => {
    killEverything();
    await env?.teardown();
  });

  test('a SIGTERMed `npm run worker` hands its running chunks back at once: another worker takes them long before the heartbeat timeout, and every row is written once', async () => {
    const dataDir = tempDataDir();
    const port = await freePort();
    // A 60 s heartbeat timeout: only a hand-back gets the chunks retried within seconds.
    const common = {
      DATA_DIR: dataDir,
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: 'shutdown-workers',
      JOB_CHUNK_FORECASTS: '1',
      JOB_PARALLELISM: '4',
      JOB_HEARTBEAT_TIMEOUT_MS: '60000',
    };
    // No grace: A's chunk (an aarima fit of about 3 s) cannot finish in the drain, however late the poll below saw it start.
    const workerA = startProcess('bin/worker.ts', { ...common, SHUTDOWN_GRACE: '0' });
    const workerB = startProcess('bin/worker.ts', common);
    startProcess('bin/server.ts', { ...common, PORT: String(port), HOST: '127.0.0.1', RUN_WORKER: 'false' });
    await waitForApi(port);

    const series = 10;
    const submitted = await api(port, 'POST', '/forecast-jobs?model=aarima', slowRequest(series, 300));
    expect(submitted.status).toBe(200);
    const id: string = submitted.body.job_id;
    const handle = env.client.workflow.getHandle(id);
    const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;
    // A chunk A started well under a fit ago: the signal lands while it runs. A chunk seen late in
    // its fit could finish before the shutdown reached it, leaving nothing to hand back. Planning
    // and the job's summary are activities too, but quick ones: seen on A, they could end before
    // the signal and leave every chunk to B.
    const justStarted = (a: temporal.api.workflow.v1.IPendingActivityInfo) =>
      a.activityType?.name === 'runChunk' &&
      a.lastWorkerIdentity === workerA.identity &&
      a.state === STARTED &&
      a.lastStartedTime &&
      Date.now() - timestampMs(a.lastStartedTime) < 400;
    await until(async () => (await handle.describe()).raw.pendingActivities?.some(justStarted), 60_000, 'worker A to start a chunk');
    const signalled = Date.now();
    workerA.child.kill('SIGTERM');
    const exit = await workerA.exited;
    expect(exit.code, workerA.stderr()).toBe(0);
    expect(exit.at - signalled).toBeLessThan(10_000);

    const done = await finished(port, id, 120_000);
    expect(done.status).toBe('completed');
    expect(await resultRows(dataDir, id)).toEqual({ metrics: series, pairs: series, predictions: series * 14 });

    // The chunks A gave up were retried by B, well before the 60 s heartbeat timeout could have, after a failure that says why.
    const events = (await handle.fetchHistory()).events ?? [];
    const retried = events.filter((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
    expect(retried.length).toBeGreaterThan(0);
    for (const event of retried) {
      expect(event.activityTaskStartedEventAttributes?.identity).toBe(workerB.identity);
      expect(eventMs(event) - signalled).toBeLessThan(45_000);
      expect(event.activityTaskStartedEventAttributes?.lastFailure?.message).toMatch(/worker is shutting down/i);
    }
  }, 180_000);

  test('a second signal ends the drain at once (exit 1); past SHUTDOWN_GRACE a request still running is cut off and the process exits 0', async () => {
    const start = async (grace: string) => {
      const port = await freePort();
      const service = startProcess('bin/server.ts', {
        DATA_DIR: tempDataDir(),
        TEMPORAL_ADDRESS: env.address,
        PORT: String(port),
        HOST: '127.0.0.1',
        RUN_WORKER: 'false',
        SHUTDOWN_GRACE: grace,
      });
      await waitForApi(port);
      const body = JSON.stringify(slowRequest(4, 300));
      const connection = await openConnection(port);
      connection.socket.write(`${requestHead('POST', '/forecast?model=aarima', body)}\r\n${body}`);
      await sleep(1_000);
      return { service, connection };
    };

    const forced = await start('60s');
    forced.service.child.kill('SIGTERM');
    // A repeat within a second is the same request to stop (one Ctrl-C can arrive twice): the drain goes on.
    await sleep(200);
    forced.service.child.kill('SIGINT');
    await sleep(1_300);
    expect(forced.service.child.exitCode).toBeNull();
    const second = Date.now();
    forced.service.child.kill('SIGTERM');
    const forcedExit = await forced.service.exited;
    expect(forcedExit.code).toBe(1);
    expect(forcedExit.at - second).toBeLessThan(3_000);
    expect(await forced.connection.closed).toBe('');

    const bounded = await start('1s');
    const signalled = Date.now();
    bounded.service.child.kill('SIGTERM');
    expect(await bounded.connection.closed).toBe('');
    const boundedExit = await bounded.service.exited;
    expect(boundedExit.code, bounded.service.stderr()).toBe(0);
    expect(boundedExit.at - signalled).toBeLessThan(1_000 + 5_000);
  }, 120_000);
});
