/**
 * A secured Temporal (docs/deployment.md, "A secured Temporal"): the API process and a worker
 * process reach a Temporal that requires TLS with client certificates, and a job completes over
 * mutual TLS. A wrong CA, a missing or foreign client certificate, a wrong server name and an
 * unreachable address each stop the start with `Cannot start: ...` naming the setting at fault.
 * Real processes, a real dev server, and nginx checking client certificates in front of it.
 */
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Environment } from '../../config.ts';
import { tempDataDir } from '../api/helpers.ts';
import { freePort } from '../store/minio.ts';
import { api, finished, killEverything, startProcess, waitForApi, type RunningProcess } from './service-processes.ts';
import { startTestTemporal } from './temporal-env.ts';
import { makeCertificates, nginxMissing, SERVER_NAME, startTlsFront, type Certificates, type TlsFront } from './tls-front.ts';

const missing = nginxMissing();
// CI installs nginx (scripts/ensure-nginx.sh): there a missing nginx is a failure, not a skip.
if (missing && process.env.CI) throw new Error(missing);

/** Starts an entry point that must fail, and returns its exit code and what it printed. */
async function startFails(entry: 'bin/server.ts' | 'bin/worker.ts', env: Environment): Promise<{ code: number | null; stderr: string }> {
  const started = startProcess(entry, { PORT: String(await freePort()), HOST: '127.0.0.1', ...env });
  const { code } = await started.exited;
  return { code, stderr: started.stderr() };
}

/** Once the API on `port` answers, one small job through it: the status it ends in. */
async function jobThrough(port: number, server: RunningProcess): Promise<string> {
  await waitForApi(port).catch((error: Error) => {
    throw new Error(`${error.message}: ${server.stderr()}`);
  });
  const index = Array.from({ length: 30 }, (_, t) => new Date(Date.UTC(2024, 0, 1) + t * 86_400_000).toISOString().slice(0, 10));
  const submitted = await api(port, 'POST', '/forecast-jobs?model=naive', { series: [{ index, target: index.map((_, t) => t % 7) }], horizon: 3, freq: 'D' });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  return (await finished(port, submitted.body.job_id, 60_000)).status;
}

describe.skipIf(missing !== null)(`Temporal behind mutual TLS${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let temporal: TestWorkflowEnvironment;
  let certs: Certificates;
  let front: TlsFront;
  let keyFront: TlsFront;
  let secured: Environment;
  let cloud: Environment;

  beforeAll(async () => {
    temporal = await startTestTemporal();
    certs = await makeCertificates(path.join(tempDataDir(), 'certs'));
    front = await startTlsFront(certs, temporal.address);
    keyFront = await startTlsFront(certs, temporal.address, { apiKey: 'cloud-key' });
    secured = {
      TEMPORAL_ADDRESS: front.address,
      TEMPORAL_TLS_CA: certs.serverCa,
      TEMPORAL_TLS_CERT: certs.clientCert,
      TEMPORAL_TLS_KEY: certs.clientKey,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_TASK_QUEUE: 'mtls',
    };
    cloud = {
      TEMPORAL_ADDRESS: keyFront.address,
      TEMPORAL_TLS_CA: certs.serverCa,
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      TEMPORAL_API_KEY: 'cloud-key',
      TEMPORAL_TASK_QUEUE: 'api-key',
    };
  }, 120_000);
  afterAll(async () => {
    killEverything();
    await front?.stop();
    await keyFront?.stop();
    await temporal?.teardown();
  });

  test('an API process and a worker process both connect over mutual TLS, and a job completes', async () => {
    const apiPort = await freePort();
    const store = { STORAGE_URL: `file://${tempDataDir()}` };
    startProcess('bin/worker.ts', { ...secured, ...store, DATA_DIR: tempDataDir() });
    const server = startProcess('bin/server.ts', {
      ...secured,
      ...store,
      DATA_DIR: tempDataDir(),
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      RUN_WORKER: 'false',
    });
    expect(await jobThrough(apiPort, server)).toBe('completed');
  }, 120_000);

  test('a wrong CA, a missing or foreign client certificate, a wrong server name and an unreachable address stop the start naming the setting', async () => {
    const dataDir = tempDataDir();
    // A port another process holds: the API's own listen fails, after Temporal and the store were reached.
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const busyPort = String((busy.address() as AddressInfo).port);
    const cases: { entry: 'bin/server.ts' | 'bin/worker.ts'; env: Environment; message: RegExp }[] = [
      { entry: 'bin/server.ts', env: { ...secured, PORT: busyPort, HOST: '127.0.0.1' }, message: /EADDRINUSE/ },
      { entry: 'bin/server.ts', env: { ...secured, DEFAULT_MODEL: 'aets2' }, message: /DEFAULT_MODEL 'aets2' is not a model of this server \(.*aets.*\)/ },
      { entry: 'bin/worker.ts', env: { ...secured, BETA_DUCKDB_MEMORY_LIMIT: 'lots' }, message: /BETA_DUCKDB_MEMORY_LIMIT 'lots' is not a size DuckDB takes/ },
      { entry: 'bin/server.ts', env: { ...secured, TEMPORAL_TLS_CA: certs.rogueCa }, message: /TEMPORAL_TLS_CA=\S+rogue-ca\.pem did not sign/ },
      { entry: 'bin/worker.ts', env: { ...secured, TEMPORAL_TLS_CA: certs.rogueCa }, message: /TEMPORAL_TLS_CA=\S+rogue-ca\.pem did not sign/ },
      {
        entry: 'bin/server.ts',
        env: { ...secured, TEMPORAL_TLS_CERT: '', TEMPORAL_TLS_KEY: '' },
        message: /requires a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/,
      },
      {
        entry: 'bin/worker.ts',
        env: { ...secured, TEMPORAL_TLS_CERT: '', TEMPORAL_TLS_KEY: '' },
        message: /requires a client certificate: set TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY/,
      },
      {
        entry: 'bin/server.ts',
        env: { ...secured, TEMPORAL_TLS_CERT: certs.rogueClientCert, TEMPORAL_TLS_KEY: certs.rogueClientKey },
        message: /refused the client certificate TEMPORAL_TLS_CERT=\S+rogue-client\.pem/,
      },
      { entry: 'bin/server.ts', env: { ...secured, TEMPORAL_TLS_SERVER_NAME: '' }, message: /certificate for another name .*set TEMPORAL_TLS_SERVER_NAME/ },
      { entry: 'bin/server.ts', env: { ...secured, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` }, message: /cannot be reached \(TEMPORAL_ADDRESS\)/ },
      { entry: 'bin/worker.ts', env: { ...secured, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` }, message: /cannot be reached \(TEMPORAL_ADDRESS\)/ },
      {
        entry: 'bin/server.ts',
        env: { ...secured, TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: '', TEMPORAL_TLS_CERT: '', TEMPORAL_TLS_KEY: '', TEMPORAL_TLS_SERVER_NAME: '' },
        message: /without answering over plaintext HTTP\/2.*set TEMPORAL_TLS=true/,
      },
      {
        entry: 'bin/server.ts',
        env: { ...secured, TEMPORAL_TLS_KEY: certs.rogueClientKey },
        message: /TEMPORAL_TLS_KEY=\S+ is not the private key of TEMPORAL_TLS_CERT/,
      },
    ];
    // One at a time: each start loads the engine, and this machine may have two cores.
    for (const { entry, env, message } of cases) {
      const { code, stderr } = await startFails(entry, { ...env, DATA_DIR: dataDir });
      expect(code, `${entry}: ${stderr}`).toBe(1);
      expect(stderr, entry).toMatch(/^Cannot start: /m);
      expect(stderr, entry).toMatch(message);
      expect(stderr, entry).not.toMatch(/^\s+at /m);
    }
    busy.close();
    expect(fs.existsSync(dataDir)).toBe(true);
  }, 240_000);

  test('with an API key, as Temporal Cloud takes one, a job completes; a wrong or missing key stops the start naming TEMPORAL_API_KEY', async () => {
    const apiPort = await freePort();
    // The in-process worker this time: both the client's connection and the worker's send the key.
    const server = startProcess('bin/server.ts', { ...cloud, DATA_DIR: tempDataDir(), PORT: String(apiPort), HOST: '127.0.0.1' });
    expect(await jobThrough(apiPort, server)).toBe('completed');

    const dataDir = tempDataDir();
    const wrong = await startFails('bin/worker.ts', { ...cloud, DATA_DIR: dataDir, TEMPORAL_API_KEY: 'stale-key' });
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringMatching(/^Cannot start: Temporal at \S+ refused TEMPORAL_API_KEY/m)]);
    const none = await startFails('bin/server.ts', { ...cloud, DATA_DIR: dataDir, TEMPORAL_API_KEY: '' });
    expect([none.code, none.stderr]).toEqual([1, expect.stringMatching(/^Cannot start: Temporal at \S+ wants credentials .*set TEMPORAL_API_KEY/m)]);
  }, 180_000);
});
