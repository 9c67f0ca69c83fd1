import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadConfig, type Environment, type StorageConfig } from '../../config.ts';
import { S3Bucket } from '../../store/s3-bucket.ts';

/**
 * A real S3-compatible server for a test file: MinIO, built and cached by the test set-up
 * (scripts/ensure-minio.sh), on a free loopback port with a data folder of its own. `stop` and
 * `start` take it away and bring it back on the same port and data, for fault tests.
 */
export interface Minio {
  endpoint: string;
  /** The variables a service process needs to use a bucket of this server as its job store. */
  env(bucket: string, prefix?: string): Environment;
  storage(bucket: string, prefix?: string): StorageConfig;
  createBucket(bucket: string): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server for good and removes its data (afterAll). */
  dispose(): Promise<void>;
}

export const MINIO_BIN =
  process.env.MINIO_BIN || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'forecasting-service', 'bin', 'minio');
const USER = 'forecast-test';
const PASSWORD = 'forecast-test-secret';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** MinIO ended before it answered (on a first start, likely its port taken since freePort; its stderr says). */
class MinioExited extends Error {}

/** First starts tried, each on a new free port. */
const START_ATTEMPTS = 3;

export async function startMinio(): Promise<Minio> {
  let port = 0;
  let endpoint = '';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'minio-test-'));
  let child: ChildProcess | undefined;

  const start = async () => {
    child = spawn(MINIO_BIN, ['server', dataDir, '--address', `127.0.0.1:${port}`, '--quiet'], {
      env: { ...process.env, MINIO_ROOT_USER: USER, MINIO_ROOT_PASSWORD: PASSWORD, MINIO_BROWSER: 'off', MINIO_UPDATE: 'off' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    const deadline = Date.now() + 60_000;
    for (;;) {
      const live = await fetch(`${endpoint}/minio/health/live`).then(
        (r) => r.ok,
        () => false,
      );
      if (live) return;
      if (child.exitCode !== null) throw new MinioExited(`MinIO (${MINIO_BIN}) exited with ${child.exitCode} at ${endpoint}: ${stderr.trim()}`);
      if (Date.now() > deadline) throw new Error(`MinIO did not start at ${endpoint}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  const env = (bucket: string, prefix = ''): Environment => ({
    STORAGE_URL: `s3://${bucket}/${prefix}`,
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: USER,
    AWS_SECRET_ACCESS_KEY: PASSWORD,
  });

  // Test files run in parallel: another one may bind the free port before MinIO does. A first start
  // that ends early is tried again on a new port; later starts (fault tests) keep theirs.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    endpoint = `http://127.0.0.1:${port}`;
    try {
      await start();
      break;
    } catch (err) {
      if (!(err instanceof MinioExited) || attempt === START_ATTEMPTS) throw err;
    }
  }
  return {
    endpoint,
    env,
    storage: (bucket, prefix) => loadConfig(env(bucket, prefix)).storage,
    async createBucket(bucket) {
      const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: USER, secretAccessKey: PASSWORD } });
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      client.destroy();
    },
    stop,
    start,
    async dispose() {
      await stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A DuckDB connection that reads a bucket of the server as the job store does (an analyst's session). */
export async function bucketConnection(minio: Minio, bucket: string) {
  const db = await DuckDBInstance.create(':memory:');
  const connection = await db.connect();
  const store = new S3Bucket(bucket, '', minio.storage(bucket).s3);
  for (const statement of (await store.duckdbSetup()).sql) await connection.run(statement);
  store.close();
  return { connection, close: () => (connection.closeSync(), db.closeSync()) };
}
