import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { StorageConfig } from '../config.ts';
import { sqlString } from '../engine/sql.ts';
import { StoreUnavailableError } from './errors.ts';
import type { ObjectStore } from './object-store.ts';
import { removeAbandonedStaging, stagingFile } from './staging-files.ts';

/** The sweep of staging files left by killed processes, once per process (staging-files.ts). */
let staleStagingSwept: Promise<unknown> | undefined;

/**
 * An S3-compatible bucket (AWS S3, GCS's S3 interoperability, MinIO, Ceph...): JSON objects and
 * listings through the AWS SDK, Parquet through DuckDB's httpfs with the same credentials (the
 * SDK's usual chain: environment, shared files, instance roles), handed to DuckDB as a secret
 * scoped to this bucket and renewed before they expire.
 */
export class S3Bucket implements ObjectStore {
  readonly url: string;
  private readonly client: S3Client;

  constructor(
    private readonly bucket: string,
    /** Key prefix inside the bucket, '' or ending in '/'. */
    private readonly prefix: string,
    private readonly settings: StorageConfig['s3'],
  ) {
    this.url = `s3://${bucket}/${prefix}`;
    this.client = new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.pathStyle,
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      // Chunks retry whole activities when the store is away; a few quick SDK retries smooth blips.
      maxAttempts: 3,
      // A store that takes connections but never answers would otherwise hold each call forever.
      requestHandler: { connectionTimeout: settings.timeouts.connectMs, socketTimeout: settings.timeouts.idleMs },
    });
  }

  location(key: string): string {
    return `s3://${this.bucket}/${this.prefix}${key}`;
  }

  async duckdbSetup(): Promise<{ sql: string[]; validUntil: number }> {
    const credentials = await this.client.config.credentials();
    const endpoint = this.settings.endpoint ? new URL(this.settings.endpoint) : null;
    const options = [
      'TYPE s3',
      `KEY_ID ${sqlString(credentials.accessKeyId)}`,
      `SECRET ${sqlString(credentials.secretAccessKey)}`,
      ...(credentials.sessionToken ? [`SESSION_TOKEN ${sqlString(credentials.sessionToken)}`] : []),
      `REGION ${sqlString(this.settings.region)}`,
      ...(endpoint ? [`ENDPOINT ${sqlString(endpoint.host)}`, `USE_SSL ${endpoint.protocol === 'https:'}`] : []),
      `URL_STYLE ${sqlString(this.settings.pathStyle ? 'path' : 'vhost')}`,
      `SCOPE ${sqlString(`s3://${this.bucket}`)}`,
    ];
    // Temporary credentials are renewed five minutes before they lapse.
    const validUntil = credentials.expiration ? credentials.expiration.getTime() - 5 * 60_000 : Infinity;
    return { sql: ['LOAD httpfs', `CREATE OR REPLACE SECRET job_store (${options.join(', ')})`], validUntil };
  }

  async check(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      const status = (error as S3ServiceException).$metadata?.httpStatusCode;
      const where = `the job store ${this.url}${this.settings.endpoint ? ` at ${this.settings.endpoint}` : ''}`;
      if (status === 404) throw new Error(`${where} cannot be used: the bucket '${this.bucket}' does not exist; create it first`);
      if (status === 403 || status === 401) {
        throw new Error(`${where} cannot be used: access denied; check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)`);
      }
      throw new Error(`${where} cannot be reached: ${(error as Error).name}: ${(error as Error).message}`);
    }
  }

  async readJson<T>(key: string): Promise<T | null> {
    try {
      const object = await this.guard(this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })));
      return JSON.parse(await object.Body!.transformToString('utf8')) as T;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async writeJson(key: string, value: unknown): Promise<void> {
    // A PUT replaces the object whole: readers see the old one or the new one.
    await this.guard(
      this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.prefix + key, Body: JSON.stringify(value), ContentType: 'application/json' })),
    );
  }

  async createJson(key: string, value: unknown): Promise<boolean> {
    // A conditional PUT (If-None-Match: *): the store refuses it with 412 where the key exists,
    // atomically (AWS S3 since 2024, MinIO, and most S3-compatible stores).
    const put = new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.prefix + key,
      Body: JSON.stringify(value),
      ContentType: 'application/json',
      IfNoneMatch: '*',
    });
    for (let attempt = 1; ; attempt++) {
      try {
        await this.guard(this.client.send(put));
        return true;
      } catch (error) {
        const status = (error as S3ServiceException).$metadata?.httpStatusCode;
        if (status === 412) return false;
        // 409: another conditional write of the key is in flight; AWS asks to retry it.
        if (status === 409 && attempt < 5) await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        else throw error;
      }
    }
  }

  async writeWith(key: string, produce: (location: string) => Promise<void>): Promise<void> {
    // Produced into a local file, then one PUT (a multipart upload when large): cheaper than
    // DuckDB's own multipart upload for the many small parts a job writes, and as whole: the
    // object appears when the upload completes, so a failed write leaves the earlier one, or none.
    staleStagingSwept ??= removeAbandonedStaging().catch(() => undefined);
    await staleStagingSwept;
    const file = stagingFile();
    try {
      await produce(file);
      await this.putFile(key, file);
    } finally {
      await fs.promises.rm(file, { force: true });
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.guard(this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async children(prefix: string): Promise<string[]> {
    const base = `${this.prefix}${prefix}/`;
    const names: string[] = [];
    for await (const page of this.pages(base, '/')) {
      for (const p of page.CommonPrefixes ?? []) names.push(p.Prefix!.slice(base.length, -1));
      for (const o of page.Contents ?? []) names.push(o.Key!.slice(base.length));
    }
    return names;
  }

  async read(key: string): Promise<Readable> {
    const object = await this.guard(this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })));
    return object.Body as Readable;
  }

  async putFile(key: string, file: string): Promise<void> {
    // A multipart upload of parts read from the file as they go; the object appears when it completes.
    const upload = new Upload({ client: this.client, params: { Bucket: this.bucket, Key: this.prefix + key, Body: fs.createReadStream(file) } });
    await this.guard(upload.done());
  }

  async getFile(key: string, file: string): Promise<void> {
    await this.guard(pipeline(await this.read(key), fs.createWriteStream(file)));
  }

  async removeAll(prefix: string): Promise<void> {
    for await (const page of this.pages(`${this.prefix}${prefix}/`)) {
      const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
      if (keys.length > 0) await this.guard(this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } })));
    }
  }

  /** DuckDB's failures on the bucket's locations: IO and HTTP errors mean the store is away. */
  unavailable(error: unknown): StoreUnavailableError | null {
    return /^(IO|HTTP) Error/.test((error as Error)?.message ?? '') ? new StoreUnavailableError(this.url, error) : null;
  }

  close(): void {
    this.client.destroy();
  }

  /** The SDK's failures to reach the store (no answer, or a 5xx after its retries) as StoreUnavailableError. */
  private async guard<T>(sending: Promise<T>): Promise<T> {
    try {
      return await sending;
    } catch (error) {
      const status = (error as S3ServiceException).$metadata?.httpStatusCode;
      if (status === undefined || status >= 500) throw new StoreUnavailableError(this.url, error);
      throw error;
    }
  }

  private async *pages(prefix: string, delimiter?: string) {
    let token: string | undefined;
    do {
      const page = await this.guard(
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, Delimiter: delimiter, ContinuationToken: token })),
      );
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

function isMissing(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata?.httpStatusCode === 404);
}

/** `s3://bucket/prefix` split into the bucket and a key prefix ('' or ending in '/'). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/^\/+|\/+$/g, '');
  return { bucket: parsed.host, prefix: path ? `${path}/` : '' };
}
