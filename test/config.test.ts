import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { loadConfig, type Environment } from '../config.ts';
import { tempDataDir } from './api/helpers.ts';
import { makeCertificates, type Certificates } from './jobs/tls-front.ts';

test('JOB_RETENTION: minutes, hours or days; unset keeps jobs; anything else stops the start naming the variable', () => {
  expect(loadConfig({}).jobs.retentionMs).toBeNull();
  expect(loadConfig({ JOB_RETENTION: '90m' }).jobs.retentionMs).toBe(90 * 60_000);
  expect(loadConfig({ JOB_RETENTION: '12h' }).jobs.retentionMs).toBe(12 * 3_600_000);
  expect(loadConfig({ JOB_RETENTION: '30d' }).jobs.retentionMs).toBe(30 * 86_400_000);
  for (const bad of ['30', '0d', '1w', '-1d', 'soon']) expect(() => loadConfig({ JOB_RETENTION: bad })).toThrow(/JOB_RETENTION/);
});

test('whole-number settings take digits only: a fraction, hex, an exponent or a blank stops the start naming the variable', () => {
  expect(loadConfig({ JOB_CHUNKS_PER_RUN: ' 40 ' }).jobs.chunksPerRun).toBe(40);
  for (const bad of ['1.5', '0x10', '1e3', ' ', '-1', 'ten'])
    expect(() => loadConfig({ JOB_CHUNKS_PER_RUN: bad }), bad).toThrow(`JOB_CHUNKS_PER_RUN must be a whole number >= 1; got '${bad}'`);
  expect(() => loadConfig({ PORT: ' ' })).toThrow(/PORT must be a whole number/);
});

test('thread counts and file stores: a bad value stops the start naming the variable, never a silent default', () => {
  expect(loadConfig({ MODEL_THREADS: '3' }).engine.modelThreads).toBe(3);
  for (const bad of ['0', 'two', '1.5']) expect(() => loadConfig({ MODEL_THREADS: bad }), bad).toThrow(/MODEL_THREADS must be a whole number >= 1/);
  expect(() => loadConfig({ ONNX_THREADS: '-2' })).toThrow(/ONNX_THREADS must be a whole number >= 1/);
  expect(loadConfig({ STORAGE_URL: 'file:///srv/forecasts' }).storage.url).toBe('file:///srv/forecasts');
  for (const bad of ['file:relative', 'file://data/jobs'])
    expect(() => loadConfig({ STORAGE_URL: bad }), bad).toThrow(`STORAGE_URL must be an absolute file URL (file:///path/to/store); got '${bad}'`);
});

test('RUN_WORKER: true by default; false or 0 (any case) turns the in-process worker off; anything else stops the start', () => {
  expect(loadConfig({}).temporal.runWorker).toBe(true);
  for (const off of ['false', 'FALSE', '0', ' false ']) expect(loadConfig({ RUN_WORKER: off }).temporal.runWorker, off).toBe(false);
  for (const on of ['true', 'True', '1']) expect(loadConfig({ RUN_WORKER: on }).temporal.runWorker, on).toBe(true);
  expect(() => loadConfig({ RUN_WORKER: 'no' })).toThrow("RUN_WORKER must be true or false; got 'no'");
});

test('TEMPORAL_UI_PORT: 1000 above the dev server by default, 0 for none', () => {
  expect(loadConfig({}).temporal.uiPort).toBe(8233);
  expect(loadConfig({ TEMPORAL_DEV_PORT: '17233' }).temporal.uiPort).toBe(18233);
  expect(loadConfig({ TEMPORAL_UI_PORT: '0' }).temporal.uiPort).toBe(0);
});

test('SHUTDOWN_GRACE: 25 s by default; milliseconds, seconds (also a plain number) or minutes; anything else stops the start naming the variable', () => {
  expect(loadConfig({}).shutdownGraceMs).toBe(25_000);
  expect(loadConfig({ SHUTDOWN_GRACE: '500ms' }).shutdownGraceMs).toBe(500);
  expect(loadConfig({ SHUTDOWN_GRACE: '30s' }).shutdownGraceMs).toBe(30_000);
  expect(loadConfig({ SHUTDOWN_GRACE: '1.5' }).shutdownGraceMs).toBe(1_500);
  expect(loadConfig({ SHUTDOWN_GRACE: '2m' }).shutdownGraceMs).toBe(120_000);
  expect(loadConfig({ SHUTDOWN_GRACE: '0' }).shutdownGraceMs).toBe(0);
  for (const bad of ['-1s', '1h', 'soon', '5 s']) expect(() => loadConfig({ SHUTDOWN_GRACE: bad })).toThrow(/SHUTDOWN_GRACE/);
});

test('ONNX_EXECUTION_PROVIDERS: unset lets the server choose; a list is taken in order; an unknown or repeated name stops the start naming the variable', () => {
  const providers = (value?: string) => loadConfig(value === undefined ? {} : { ONNX_EXECUTION_PROVIDERS: value }).engine.models.executionProviders;
  expect(providers()).toBeNull();
  expect(providers('')).toBeNull();
  expect(providers('cpu')).toEqual(['cpu']);
  expect(providers(' CUDA , cpu ')).toEqual(['cuda', 'cpu']);
  expect(providers('tensorrt,cuda,cpu')).toEqual(['tensorrt', 'cuda', 'cpu']);
  expect(() => providers('gpu')).toThrow(/ONNX_EXECUTION_PROVIDERS names 'gpu', which is not an ONNX Runtime execution provider; use cpu, cuda/);
  expect(() => providers('cuda,,cpu')).toThrow(/ONNX_EXECUTION_PROVIDERS names ''/);
  expect(() => providers('cuda,cuda')).toThrow(/ONNX_EXECUTION_PROVIDERS names a provider twice/);
});

test('models install: the Hub from HF_ENDPOINT (default huggingface.co) with HF_TOKEN; downloads under the cache folder unless MODEL_DOWNLOADS_DIR says', () => {
  const defaults = loadConfig({ XDG_CACHE_HOME: '/var/cache/me' }).modelInstall;
  expect(defaults).toEqual({ hubEndpoint: 'https://huggingface.co', hubToken: null, downloadsDir: '/var/cache/me/forecasting-service/downloads' });
  const mirror = loadConfig({ HF_ENDPOINT: 'http://hub.internal:8080/', HF_TOKEN: ' hf_abc ', MODEL_DOWNLOADS_DIR: '/srv/downloads' }).modelInstall;
  expect(mirror).toEqual({ hubEndpoint: 'http://hub.internal:8080', hubToken: 'hf_abc', downloadsDir: '/srv/downloads' });
  expect(() => loadConfig({ HF_ENDPOINT: 'hub.internal' })).toThrow(/HF_ENDPOINT must be an http\(s\) URL/);
  expect(() => loadConfig({ HF_ENDPOINT: 'ftp://hub.internal' })).toThrow(/HF_ENDPOINT must be an http\(s\) URL/);
});

describe('Temporal TLS settings', () => {
  let certs: Certificates;
  beforeAll(async () => {
    certs = await makeCertificates(path.join(tempDataDir(), 'certs'));
  }, 60_000);
  const address = { TEMPORAL_ADDRESS: 'temporal.internal:7233' };

  test('off unless asked for; a CA, a client certificate, a server name or an API key switch TLS on', () => {
    expect(loadConfig(address).temporal.tls).toBeNull();
    expect(loadConfig({ ...address, TEMPORAL_TLS: 'true' }).temporal.tls).toEqual({
      serverCa: null,
      clientCertificate: null,
      serverName: null,
      files: { ca: null, cert: null, key: null },
    });
    const cloud = loadConfig({ ...address, TEMPORAL_API_KEY: 'secret', TEMPORAL_NAMESPACE: 'prod.abc12' }).temporal;
    expect([cloud.tls?.serverCa, cloud.apiKey, cloud.namespace]).toEqual([null, 'secret', 'prod.abc12']);
    expect(loadConfig({ ...address, TEMPORAL_API_KEY: 'secret', TEMPORAL_TLS: 'false' }).temporal.tls).toBeNull();
    const mutual = loadConfig({
      ...address,
      TEMPORAL_TLS_CA: certs.serverCa,
      TEMPORAL_TLS_CERT: certs.clientCert,
      TEMPORAL_TLS_KEY: certs.clientKey,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
    }).temporal.tls!;
    expect(mutual.serverCa).toBe(fs.readFileSync(certs.serverCa, 'utf8'));
    expect(mutual.clientCertificate).toEqual({ cert: fs.readFileSync(certs.clientCert, 'utf8'), key: fs.readFileSync(certs.clientKey, 'utf8') });
    expect(mutual.serverName).toBe('temporal.test');
  });

  test('a wrong or contradictory setting stops the start naming it', () => {
    const client = { TEMPORAL_TLS_CERT: certs.clientCert, TEMPORAL_TLS_KEY: certs.clientKey };
    const cases: [Environment, RegExp][] = [
      [{ TEMPORAL_TLS_CA: certs.serverCa }, /TEMPORAL_TLS_CA apply to a cluster named by TEMPORAL_ADDRESS, which is not set/],
      [{ TEMPORAL_API_KEY: 'secret' }, /TEMPORAL_API_KEY apply to a cluster named by TEMPORAL_ADDRESS/],
      [{ ...address, TEMPORAL_TLS: 'yes' }, /TEMPORAL_TLS must be true or false; got 'yes'/],
      [{ ...address, TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA: certs.serverCa }, /TEMPORAL_TLS=false contradicts TEMPORAL_TLS_CA/],
      [{ ...address, TEMPORAL_TLS_CERT: certs.clientCert }, /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/],
      [{ ...address, TEMPORAL_TLS_KEY: certs.clientKey }, /TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together/],
      [{ ...address, TEMPORAL_TLS_CA: '/no/such/ca.pem' }, /TEMPORAL_TLS_CA=\/no\/such\/ca\.pem cannot be read/],
      [{ ...address, TEMPORAL_TLS_CA: certs.clientKey }, /TEMPORAL_TLS_CA=\S+ is not a PEM certificate/],
      [{ ...address, ...client, TEMPORAL_TLS_KEY: certs.clientCert }, /TEMPORAL_TLS_KEY=\S+ is not a PEM private key/],
      [{ ...address, ...client, TEMPORAL_TLS_KEY: certs.rogueClientKey }, /TEMPORAL_TLS_KEY=\S+rogue-client\.key is not the private key of TEMPORAL_TLS_CERT/],
      [{ TEMPORAL_DEV_PORT: '70000' }, /TEMPORAL_DEV_PORT must be a port number/],
    ];
    for (const [env, message] of cases) expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
  });
});
