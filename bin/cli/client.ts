import fs from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ApiError, CliError, UsageError, type Problem } from './errors.ts';

/** Where the service is and who calls it: from flags, else the environment (config.ts loadClientConfig). */
export interface Connection {
  baseUrl: string;
  apiKey: string | null;
}

/**
 * Refusals made before anything was done, which the same request may simply repeat after the
 * Retry-After: the rate limit, a burst of submissions, and a submission with the same
 * Idempotency-Key still creating its job. A quota (`quota_exceeded`) is not waited out.
 */
const RETRY_AFTER_CODES = new Set(['rate_limited', 'too_many_submissions', 'idempotency_key_in_use']);
const RETRIES_AFTER_REFUSAL = 20;
/** A Retry-After longer than this is not waited out: the caller hears about the limit instead. */
const LONGEST_RETRY_AFTER_S = 60;
/** A connection lost mid-request: a submission is sent again with its Idempotency-Key, which makes one job of both. */
const DROPPED_CONNECTION_CODES = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);
const RETRIES_AFTER_DROP = 3;

/** What each refusal usually means for someone at a terminal. */
const HINTS: Record<number, string> = {
  401: 'check the key: --api-key or FORECAST_API_KEY (a key is made with `forecast keys create <principal>` where the service keeps its DATA_DIR)',
  403: 'it belongs to another principal: use the key that made it',
};

/** Node's network error codes, in words. */
const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS lookup failed)',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'host unreachable',
  UND_ERR_SOCKET: 'the connection was closed',
};

/** The stable job API over HTTP, with the key as a bearer token; every non-2xx answer becomes an ApiError. */
export class ApiClient {
  private readonly base: string;

  constructor(private readonly connection: Connection) {
    let url: URL;
    try {
      url = new URL(connection.baseUrl);
    } catch {
      throw new UsageError(`the service URL '${connection.baseUrl}' is not a URL (--url or FORECAST_URL, for example http://127.0.0.1:8080)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UsageError(`the service URL must start with http:// or https://; got '${connection.baseUrl}'`);
    // A base with a path (behind a proxy) keeps it: the API's paths are appended, not resolved.
    this.base = connection.baseUrl.replace(/\/+$/, '');
  }

  /** A JSON call; a submission names itself with `idempotencyKey`, so that sending it again never makes a second job. */
  async json<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: string, idempotencyKey?: string): Promise<T> {
    const response = await this.send(method, path, body, idempotencyKey);
    const text = await response.text();
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null) return value as T;
    } catch {
      // Answered below: the same words for any answer that is no JSON object.
    }
    throw this.notTheService(`${method} ${path}`, `an answer that is no JSON object (${response.headers.get('content-type') ?? 'no content type'})`);
  }

  /** An answer this service would not give: most often the URL names another server. */
  notTheService(call: string, what: string): CliError {
    return new CliError(`${this.base} answered ${call} with ${what}: is --url (or FORECAST_URL) the forecasting service?`);
  }

  /** Streams a response body into a file (written beside it first, so a failed download leaves nothing half-written). */
  async download(path: string, file: string): Promise<void> {
    const response = await this.send('GET', path);
    const partial = `${file}.partial`;
    try {
      await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), fs.createWriteStream(partial));
      fs.renameSync(partial, file);
    } catch (error) {
      fs.rmSync(partial, { force: true });
      throw new CliError(`the download of ${this.base}${path} to ${file} failed: ${(error as Error).message}`);
    }
  }

  private async send(method: string, path: string, body?: string, idempotencyKey?: string): Promise<Response> {
    if (!this.connection.apiKey) throw new UsageError('no API key: pass --api-key or set FORECAST_API_KEY');
    const headers: Record<string, string> = { authorization: `Bearer ${this.connection.apiKey}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let refusals = 0;
    let drops = 0;
    for (;;) {
      let response: Response;
      try {
        response = await this.fetch(`${this.base}${path}`, { method, headers, body });
      } catch (error) {
        const resend = method === 'GET' || idempotencyKey !== undefined;
        if (error instanceof NetworkError && DROPPED_CONNECTION_CODES.has(error.code) && resend && drops++ < RETRIES_AFTER_DROP) {
          await sleep(1000 * 2 ** drops);
          continue;
        }
        throw error;
      }
      if (response.ok) return response;
      const problem = await readProblem(response);
      const wait = Number(response.headers.get('retry-after') ?? '1');
      if (RETRY_AFTER_CODES.has(problem.code ?? '') && refusals++ < RETRIES_AFTER_REFUSAL && wait <= LONGEST_RETRY_AFTER_S) {
        await sleep(Math.max(1, wait) * 1000);
        continue;
      }
      throw new ApiError(response.status, problem, HINTS[response.status]);
    }
  }

  private async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = (cause?.code && NETWORK_ERRORS[cause.code]) ?? cause?.message ?? (error as Error).message;
      throw new NetworkError(`cannot reach the forecasting service at ${this.base}: ${reason}`, cause?.code ?? '');
    }
  }
}

/** The service could not be reached, or the connection broke: `code` is Node's (ECONNREFUSED, ECONNRESET, ...). */
export class NetworkError extends CliError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message, undefined, ['is it running (npm start)? Point the CLI at it with --url or FORECAST_URL']);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The problem+json body of a refusal; anything else (a proxy's HTML page) as its status and first line. */
async function readProblem(response: Response): Promise<Problem> {
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as Problem;
    if (parsed && typeof parsed === 'object') return parsed;
  } catch {
    // not JSON: described below
  }
  const firstLine = text.trim().split('\n')[0]?.slice(0, 200);
  return { title: response.statusText || `HTTP ${response.status}`, status: response.status, detail: firstLine || null };
}
