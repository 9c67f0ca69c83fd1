import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../problem.ts';

/**
 * The multipart body of POST /v1-beta/forecast: the JSON `query` part, and data parts streamed
 * to files under DATA_DIR (never held in memory, never named after the client's file name).
 * The caller removes `dir` when the request ends, whatever its outcome.
 */

export interface UploadedPart {
  /** The part name: what `inline://<name>` resolves. */
  name: string;
  file: string;
  /** The client's file name, only to help an error message. */
  filename: string;
  bytes: number;
  /** SHA-256 of the part's bytes (hex): an Idempotency-Key's fingerprint of the upload. */
  sha256: string;
}

export interface Upload {
  dir: string;
  /** The query part, parsed as JSON; undefined when no part was named `query`. */
  query: unknown;
  parts: Map<string, UploadedPart>;
  bytes: number;
}

/** The query part is a small JSON document. */
export const MAX_QUERY_BYTES = 1024 * 1024;
/** Parts beyond these are refused (413) rather than parsed. */
const MAX_PARTS = 64;

export const uploadsDir = (dataDir: string) => path.join(dataDir, 'beta-uploads');

const tooLarge = (maxBytes: number) =>
  new HttpError(413, 'payload_too_large', `the upload is larger than this server accepts (${maxBytes} bytes, BETA_MAX_UPLOAD_BYTES)`);
const invalid = (path: string, message: string) => new HttpError(422, 'invalid_request', message, [{ path, message }]);
const invalidJson = (detail: string) =>
  new HttpError(400, 'invalid_json', `the query part is not valid JSON: ${detail}`, [{ path: 'body.query', message: 'not valid JSON' }]);

/** Counts the bytes of the whole upload and stops it past the limit; hashes the part's bytes on the way. */
function byteCounter(upload: Upload, maxBytes: number, refuse: () => HttpError, hash: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      upload.bytes += chunk.length;
      hash.update(chunk);
      if (upload.bytes > maxBytes) done(refuse());
      else done(null, chunk);
    },
  });
}

function parseQuery(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalidJson((error as Error).message);
  }
}

/** @fastify/multipart's own refusals, as problem+json the client can act on. */
function fromMultipartError(error: unknown, refuse: () => HttpError): unknown {
  const code = (error as { code?: string }).code;
  switch (code) {
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return invalidJson('a part declared as application/json does not parse (or is over 1 MiB)');
    case 'FST_PARTS_LIMIT':
    case 'FST_FILES_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new HttpError(413, 'payload_too_large', `too many parts: at most ${MAX_PARTS} are accepted`);
    case 'FST_REQ_FILE_TOO_LARGE':
      return refuse();
    case 'FST_PROTO_VIOLATION':
      return new HttpError(400, 'bad_request', 'a part name may not be a JavaScript prototype property such as __proto__ or constructor');
  }
  if (error instanceof HttpError) return error;
  const message = (error as Error).message ?? String(error);
  if (/multipart|boundary|terminated early|closed before/i.test(message))
    return new HttpError(400, 'bad_request', `the multipart body is malformed: ${message}`);
  return error;
}

/** A fresh directory for one request's parts (created by `receiveUpload`). */
export const newUploadDir = (dataDir: string) => path.join(uploadsDir(dataDir), randomUUID());

async function readQueryFile(stream: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    if (bytes > MAX_QUERY_BYTES) throw new HttpError(413, 'payload_too_large', `the query part is larger than ${MAX_QUERY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Receives a beta upload into `options.dir`. Past `maxBytes` of data parts it stops with
 * `refuse()` (default: 413 naming BETA_MAX_UPLOAD_BYTES; a principal's tighter quota names itself).
 */
export async function receiveUpload(request: FastifyRequest, options: { dir: string; maxBytes: number; refuse?: () => HttpError }): Promise<Upload> {
  const dir = options.dir;
  const refuse = options.refuse ?? (() => tooLarge(options.maxBytes));
  await fs.promises.mkdir(dir, { recursive: true });
  const upload: Upload = { dir, query: undefined, parts: new Map(), bytes: 0 };
  let sawQuery = false;
  try {
    const parts = request.parts({ limits: { fileSize: options.maxBytes + 1, fieldSize: MAX_QUERY_BYTES, parts: MAX_PARTS, fieldNameSize: 200 } });
    for await (const part of parts) {
      const name = part.fieldname;
      if (name === 'query' ? sawQuery : upload.parts.has(name)) throw invalid(`body.${name}`, `part '${name}' was sent twice; each part is one source`);
      if (name === 'query') {
        sawQuery = true;
        if (part.type === 'field') {
          if (part.valueTruncated) throw new HttpError(413, 'payload_too_large', `the query part is larger than ${MAX_QUERY_BYTES} bytes`);
          upload.query = typeof part.value === 'string' ? parseQuery(part.value) : part.value;
        } else {
          upload.query = parseQuery(await readQueryFile(part.file));
        }
        continue;
      }
      if (part.type === 'field') {
        throw invalid(`body.${name}`, `part '${name}' was sent as a form field; send data as a file part (curl -F '${name}=@data.parquet')`);
      }
      if (name === '') throw invalid('body', 'a data part has no name; inline://<name> resolves parts by name');
      const file = path.join(dir, `part-${upload.parts.size}`);
      const hash = createHash('sha256');
      await pipeline(part.file, byteCounter(upload, options.maxBytes, refuse, hash), fs.createWriteStream(file));
      if (part.file.truncated) throw refuse();
      upload.parts.set(name, { name, file, filename: part.filename, bytes: fs.statSync(file).size, sha256: hash.digest('hex') });
    }
  } catch (error) {
    throw fromMultipartError(error, refuse);
  }
  return upload;
}

/** Removes the request's files; called in `finally`, so it must not throw. */
export async function removeUpload(dir: string): Promise<void> {
  await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/** Upload directories older than this were left by a process that died mid-request. */
const STALE_UPLOAD_MS = 24 * 3600 * 1000;

export async function removeStaleUploads(dataDir: string): Promise<void> {
  const root = uploadsDir(dataDir);
  const entries = await fs.promises.readdir(root).catch(() => [] as string[]);
  for (const name of entries) {
    const dir = path.join(root, name);
    const stat = await fs.promises.stat(dir).catch(() => null);
    if (stat && Date.now() - stat.mtimeMs > STALE_UPLOAD_MS) await removeUpload(dir);
  }
}
