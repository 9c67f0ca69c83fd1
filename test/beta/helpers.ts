import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { openBetaDatabase } from '../../engine/beta/beta-database.ts';
import { AUTH } from '../api/helpers.ts';
import { testTempDir } from '../temp-root.ts';

/**
 * Uploads for the beta tests, made by writers other than the service's own code: DuckDB's
 * `COPY ... TO` writes the Parquet files, apache-arrow's writer the Arrow IPC ones, and pyarrow
 * the compressed fixtures (tools/beta/make-compressed-arrow.py).
 */

export interface Part {
  name: string;
  data: Buffer | string;
  /** Sent as a file part when given (curl -F 'name=@file'); otherwise as a plain form field. */
  filename?: string;
  contentType?: string;
}

/** A multipart/form-data body, built by hand so every part's shape is under the test's control. */
export function multipartBody(parts: Part[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----beta-test-${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const type = part.contentType ? `\r\nContent-Type: ${part.contentType}` : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export const queryPart = (query: unknown): Part => ({ name: 'query', data: JSON.stringify(query), contentType: 'application/json' });
export const filePart = (name: string, file: string): Part => ({
  name,
  data: fs.readFileSync(file),
  filename: path.basename(file),
  contentType: 'application/octet-stream',
});

export function postBeta(app: FastifyInstance, parts: Part[], model = 'naive') {
  const { payload, headers } = multipartBody(parts);
  return app.inject({ method: 'POST', url: `/v1-beta/forecast?model=${model}`, headers: { ...AUTH, ...headers }, payload });
}

/** A temporary directory for the calling test file, removed after its tests (call at file level). */
export function tempDir(prefix = 'beta-test-'): string {
  // Under the run's temp root, which goes at the end even where this afterAll cannot be registered (in a hook).
  const dir = testTempDir(prefix);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The service's beta database for the calling test file (call at file level): opened before its
 * tests with its spill folder in `dir`, closed after them. The function returns it in a test or hook.
 */
export function betaTestDatabase(dir: string): () => DuckDBInstance {
  let db: DuckDBInstance | undefined;
  beforeAll(async () => {
    db = await openBetaDatabase({ tempDirectory: path.join(dir, 'duckdb-tmp') });
  });
  afterAll(() => db?.closeSync());
  return () => {
    if (db === undefined) throw new Error('the beta test database opens in beforeAll');
    return db;
  };
}

let writer: Promise<DuckDBInstance> | undefined;

/** Writes the rows of a SQL query to a Parquet file with DuckDB's COPY. */
export async function writeParquet(file: string, sql: string): Promise<string> {
  const db = await (writer ??= DuckDBInstance.create(':memory:'));
  const c = await db.connect();
  try {
    await c.run(`COPY (${sql}) TO '${file.replaceAll("'", "''")}' (FORMAT parquet)`);
  } finally {
    c.closeSync();
  }
  return file;
}

/** 14 days, stores a and b, skus 1 and 2: sales = day + 1, times 10 for sku 2, plus 100 in store b. */
export const RETAIL = `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS ts, store, sku, (d + 1) * (CASE WHEN sku = 2 THEN 10 ELSE 1 END) + (CASE WHEN store = 'b' THEN 100 ELSE 0 END) AS sales
  FROM range(14) r(d), (VALUES ('a'), ('b')) s(store), (VALUES (1), (2)) k(sku)`;
export const retailQuery = (extra: Record<string, unknown> = {}, input: Record<string, unknown> = {}) => ({
  input: {
    source: { uri: 'inline://sales' },
    columns: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sku: 'identifier', sales: { kind: 'target', aggregate: 'sum' } },
    ...input,
  },
  prediction_length: '3d',
  quantiles: [0.1, 0.9],
  ...extra,
});
