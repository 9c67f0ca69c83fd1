import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, test } from 'vitest';
import { JobService } from '../../api/jobs/job-service.ts';
import { buildServer } from '../../api/server.ts';
import { Engine } from '../../engine/engine.ts';
import { JobStore } from '../../store/job-store.ts';
import { AUTH, dailyRequest, tempDataDir, testConfig, useTestServer } from './helpers.ts';

const server = useTestServer();

describe('operations endpoints', () => {
  test('GET /healthz and /readyz answer without a key; without Temporal there is nothing to wait for', async () => {
    const health = await server.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await server.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: [] });
  });

  test('GET /metrics: Prometheus text with requests by route and status, forecasts and fit time by model, the model-thread queue', async () => {
    expect((await server.app.inject({ method: 'POST', url: '/forecast?model=naive', headers: AUTH, payload: dailyRequest() })).statusCode).toBe(200);
    expect((await server.app.inject({ method: 'POST', url: '/forecast?model=naive', headers: {}, payload: dailyRequest() })).statusCode).toBe(401);
    const res = await server.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    const value = (pattern: RegExp) => Number(text.match(pattern)?.[1] ?? NaN);
    expect(value(/^http_requests_total\{method="POST",route="\/forecast",status="200"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^http_requests_total\{method="POST",route="\/forecast",status="401"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^http_request_duration_seconds_count\{method="POST",route="\/forecast",status="200"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^forecasts_total\{model="naive",outcome="ok"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^model_fit_duration_seconds_count\{model="naive"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^model_batch_duration_seconds_count\{model="naive"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^model_thread_queue_depth (\d+)$/m)).toBe(0);
    expect(text).toMatch(/^# TYPE job_chunk_duration_seconds histogram$/m);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });
});

describe('GET /readyz with jobs', () => {
  const config = testConfig({ dataDir: tempDataDir() });
  const engine = new Engine(config.engine);
  let close: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await close?.();
    await engine.close();
  });

  test('Temporal unreachable: 503 naming it, without a key', async () => {
    const store = JobStore.local(config.dataDir);
    // Nothing listens on port 1: a connection made on first use fails there.
    const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const jobs = new JobService(new Client({ connection }), store, engine, { taskQueue: 'none', parallelism: 1, heartbeatTimeoutMs: 10_000, chunksPerRun: 10 });
    const app = await buildServer(config, { engine, jobs });
    close = async () => {
      await app.close();
      store.close();
    };
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(res.json().code).toBe('not_ready');
    // Named, though it answers after /readyz's own wait; its address stays in the log (anyone may ask).
    expect(res.json().detail).toBe('not ready: temporal did not answer');
  });

  test('GET /metrics still answers while Temporal is unreachable, without job counts', async () => {
    const store = JobStore.local(config.dataDir);
    const connection = Connection.lazy({ address: '127.0.0.1:1', connectTimeout: 500 });
    const jobs = new JobService(new Client({ connection }), store, engine, { taskQueue: 'none', parallelism: 1, heartbeatTimeoutMs: 10_000, chunksPerRun: 10 });
    const app = await buildServer(config, { engine, jobs });
    try {
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toMatch(/^# TYPE jobs gauge$/m);
      expect(res.body).not.toMatch(/^jobs\{/m);
    } finally {
      await app.close();
      store.close();
    }
  });
});
