/**
 * The Temporal settings of the configuration: where the cluster is, and how to reach a secured one
 * (TLS, a client certificate, a Temporal Cloud API key). Part of config.ts, the one place the
 * environment is read; every file a setting names is read and checked here, so a wrong path, a
 * key that is not the certificate's or an expired certificate stops the start naming the setting.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { readSetting, type Environment } from './setting-file.ts';

/** How the service reaches a cluster that requires TLS (docs/deployment.md, "A secured Temporal"). */
export interface TemporalTls {
  /** TEMPORAL_TLS_CA: the PEM of the CA that signed the server's certificate; null trusts Node's bundled CAs. */
  serverCa: string | null;
  /** TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY: the client certificate and its key, for mutual TLS; null sends none. */
  clientCertificate: { cert: string; key: string } | null;
  /** TEMPORAL_TLS_SERVER_NAME: the name the server's certificate must carry, when it is not TEMPORAL_ADDRESS's host. */
  serverName: string | null;
  /** The files the PEMs came from, for messages that name the setting at fault. */
  files: { ca: string | null; cert: string | null; key: string | null };
}

export interface TemporalConfig {
  /** TEMPORAL_ADDRESS: an existing cluster; null means the server starts its own dev server. */
  address: string | null;
  /** Where every process of this deployment reaches Temporal: the cluster, else the embedded dev server. */
  target: string;
  namespace: string;
  taskQueue: string;
  /** Port of the embedded dev server. */
  devPort: number;
  /** Port of the embedded dev server's Web UI (TEMPORAL_UI_PORT; 0: no UI). */
  uiPort: number;
  /** The `temporal` CLI used for the embedded dev server. */
  cliPath: string;
  /** Whether the server process also runs a worker (off for API-only processes). */
  runWorker: boolean;
  /** WORKER_METRICS_PORT: where `npm run worker` serves GET /metrics (0: nowhere). */
  workerMetricsPort: number;
  /** TEMPORAL_TLS and the TEMPORAL_TLS_* files; null is a plaintext connection. */
  tls: TemporalTls | null;
  /** TEMPORAL_API_KEY: sent as a bearer token on every call (Temporal Cloud); null sends none. */
  apiKey: string | null;
}

function port(env: Environment, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > 65_535) throw new Error(`${name} must be a port number (${min} to 65535); got '${raw}'`);
  return value;
}

/** A PEM file's text and its first certificate (a CA file may hold a bundle). */
function certificate(name: string, file: string): { pem: string; first: X509Certificate } {
  const pem = readSetting(name, file);
  try {
    return { pem, first: new X509Certificate(pem) };
  } catch (error) {
    throw new Error(`${name}=${file} is not a PEM certificate: ${(error as Error).message}`);
  }
}

/** The client certificate and its key, checked to belong together and to be valid now. */
function clientCertificate(env: Environment): TemporalTls['clientCertificate'] {
  const certFile = env.TEMPORAL_TLS_CERT || null;
  const keyFile = env.TEMPORAL_TLS_KEY || null;
  if (!certFile && !keyFile) return null;
  if (!certFile || !keyFile)
    throw new Error('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY go together: set both (a client certificate and its private key) or neither');
  const { pem, first: cert } = certificate('TEMPORAL_TLS_CERT', certFile);
  const key = readSetting('TEMPORAL_TLS_KEY', keyFile);
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(key));
  } catch (error) {
    throw new Error(`TEMPORAL_TLS_KEY=${keyFile} is not a PEM private key: ${(error as Error).message}`);
  }
  if (!matches) throw new Error(`TEMPORAL_TLS_KEY=${keyFile} is not the private key of TEMPORAL_TLS_CERT=${certFile}`);
  const now = Date.now();
  if (Date.parse(cert.validTo) < now) throw new Error(`TEMPORAL_TLS_CERT=${certFile} expired on ${cert.validTo}`);
  if (Date.parse(cert.validFrom) > now) throw new Error(`TEMPORAL_TLS_CERT=${certFile} is not valid before ${cert.validFrom}`);
  return { cert: pem, key };
}

const TLS_SETTINGS = ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_SERVER_NAME'] as const;

/**
 * TLS is on when TEMPORAL_TLS=true or any TLS setting or an API key is set (Temporal Cloud takes
 * both over TLS only); TEMPORAL_TLS=false keeps an API key on plaintext, for a local proxy that
 * adds TLS itself. Every one of them needs TEMPORAL_ADDRESS: the embedded dev server is plaintext.
 */
function tlsSettings(env: Environment, address: string | null, apiKey: string | null): TemporalTls | null {
  const flag = env.TEMPORAL_TLS;
  if (flag !== undefined && flag !== '' && flag !== 'true' && flag !== 'false') throw new Error(`TEMPORAL_TLS must be true or false; got '${flag}'`);
  const named = TLS_SETTINGS.filter((name) => env[name]);
  if (!address) {
    const set = [...(flag === 'true' ? ['TEMPORAL_TLS'] : []), ...named, ...(apiKey ? ['TEMPORAL_API_KEY'] : [])];
    if (set.length > 0)
      throw new Error(`${set.join(', ')} apply to a cluster named by TEMPORAL_ADDRESS, which is not set (the embedded dev server is plaintext)`);
    return null;
  }
  if (flag === 'false') {
    if (named.length > 0) throw new Error(`TEMPORAL_TLS=false contradicts ${named.join(', ')}: unset them, or TEMPORAL_TLS`);
    return null;
  }
  if (flag !== 'true' && named.length === 0 && !apiKey) return null;
  const caFile = env.TEMPORAL_TLS_CA || null;
  return {
    serverCa: caFile ? certificate('TEMPORAL_TLS_CA', caFile).pem : null,
    clientCertificate: clientCertificate(env),
    serverName: env.TEMPORAL_TLS_SERVER_NAME || null,
    files: { ca: caFile, cert: env.TEMPORAL_TLS_CERT || null, key: env.TEMPORAL_TLS_KEY || null },
  };
}

/** The Temporal part of the configuration (config.ts's `temporal`). */
export function temporalConfig(env: Environment): TemporalConfig {
  const devPort = port(env, 'TEMPORAL_DEV_PORT', 7233, 1);
  const address = env.TEMPORAL_ADDRESS || null;
  const apiKey = env.TEMPORAL_API_KEY || null;
  return {
    address,
    target: address ?? `127.0.0.1:${devPort}`,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || 'forecast-jobs',
    devPort,
    // Temporal's own convention: the UI 1000 ports above the frontend (7233 -> 8233).
    uiPort: port(env, 'TEMPORAL_UI_PORT', devPort + 1000, 0),
    // Where set-up (scripts/ensure-temporal-cli.sh) caches the Temporal CLI, outside the repo.
    cliPath: env.TEMPORAL_CLI || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'forecasting-service', 'bin', 'temporal'),
    runWorker: runWorker(env.RUN_WORKER),
    // Off by default: several workers may share a machine, and each needs a port of its own.
    workerMetricsPort: port(env, 'WORKER_METRICS_PORT', 0, 0),
    tls: tlsSettings(env, address, apiKey),
    apiKey,
  };
}

/** RUN_WORKER: unset, `true` or `1` runs the in-process worker; `false` or `0`, in any case, does not. Anything else stops the start: `FALSE` or `no` once started a worker silently. */
function runWorker(raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === '' || value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new Error(`RUN_WORKER must be true or false; got '${raw}'`);
}
