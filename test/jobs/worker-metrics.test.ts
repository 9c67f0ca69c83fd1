/**
 * A standalone worker (`npm run worker`) serves its own Prometheus metrics on WORKER_METRICS_PORT:
 * the chunks it ran and the forecasts it made are counted in its process, not in the API's.
 * Real processes: an API-only service and a worker on a shared Temporal dev server.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tempDataDir } from '../api/helpers.ts';
import { freePort } from '../store/minio.ts';
import { api, finished, killEverything, slowRequest, startProcess, waitForApi } from './service-processes.ts';
import { startTestTemporal, until } from './temporal-env.ts';

describe('npm run worker with WORKER_METRICS_PORT', () => {
  let env: TestWorkflowEnvironment;
  beforeAll(async () => {
    env = await startTestTemporal();
  }, 120_000);
  afterAll(async () => {
    killEverything();
    await env?.teardown();
  });

  test("serves GET /metrics with its own chunks and forecasts, GET /healthz, and nothing else; the API's /metrics has none of them", async () => {
    const dataDir = tempDataDir();
    const [apiPort, metricsPort] = [await freePort(), await freePort()];
    const common = { DATA_DIR: dataDir, TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: 'worker-metrics', HOST: '127.0.0.1' };
    const worker = startProcess('bin/worker.ts', { ...common, WORKER_METRICS_PORT: String(metricsPort) });
    startProcess('bin/server.ts', { ...common, PORT: String(apiPort), RUN_WORKER: 'false' });
    await waitForApi(apiPort);
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    await until(
      () =>
        fetch(`${metricsUrl}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      60_000,
      `the worker's metrics (${worker.stderr()})`,
    );

    const { model_config: _aarimaOnly, ...request } = slowRequest(3, 60);
    const submitted = await api(apiPort, 'POST', '/forecast-jobs?model=naive', request);
    expect(submitted.status).toBe(200);
    expect((await finished(apiPort, submitted.body.job_id, 60_000)).status).toBe('completed');

    const res = await fetch(`${metricsUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^job_chunk_duration_seconds_count\{kind="forecast"\} [1-9]/m);
    expect(text).toMatch(/^forecasts_total\{model="naive",outcome="ok"\} 3$/m);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    const fromApi = await (await fetch(`http://127.0.0.1:${apiPort}/metrics`)).text();
    expect(fromApi).not.toMatch(/^forecasts_total\{model="naive"/m);

    expect((await fetch(`${metricsUrl}/other`)).status).toBe(404);
    const post = await fetch(`${metricsUrl}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  }, 180_000);

  test('a port already taken stops the worker at start, naming the setting', async () => {
    const taken = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const worker = startProcess('bin/worker.ts', {
        DATA_DIR: tempDataDir(),
        TEMPORAL_ADDRESS: env.address,
        TEMPORAL_TASK_QUEUE: 'worker-metrics-taken',
        HOST: '127.0.0.1',
        WORKER_METRICS_PORT: String(port),
      });
      const exit = await worker.exited;
      expect(exit.code).toBe(1);
      expect(worker.stderr()).toMatch(/Cannot serve the worker's metrics on port \d+ \(WORKER_METRICS_PORT\)/);
    } finally {
      taken.close();
    }
  }, 120_000);
});
