import { pipeline, Transform, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { QUOTA_NAMES, type QuotaConfig, type Quotas } from '../config.ts';
import { HttpError } from './problem.ts';

/**
 * Per-principal quotas (docs/operations.md, "Limits and quotas"): what one principal may ask of the service
 * at once. Size quotas are refused with 413 before anything is stored or run, the concurrent-jobs
 * quota with 429; every refusal is `quota_exceeded` with a `limit` member naming the quota and its
 * value for the caller. A value of 0 is no limit.
 */
export class QuotaPolicy {
  constructor(private readonly config: QuotaConfig) {}

  /** The principal's quotas: the defaults, with its QUOTA_OVERRIDES entry on top. */
  of(principal: string): Quotas {
    return { ...this.config.defaults, ...this.config.byPrincipal[principal] };
  }
}

/** A refusal by a quota: its status, and its name and value in the problem's `limit` member. */
function exceeded(status: 413 | 429, quota: keyof Quotas, value: number, detail: string, path?: string, retryAfterSeconds?: number): HttpError {
  const name = QUOTA_NAMES[quota];
  const errors = path ? [{ path, message: `over the ${name} quota of ${value}` }] : null;
  return new HttpError(status, 'quota_exceeded', `${detail} (quota ${name}: ${value})`, errors, { limit: { name, value }, retryAfterSeconds });
}

/** 413 when a stable request has more series than the principal may send at once. */
export function requireSeriesWithin(quotas: Quotas, series: number): void {
  const limit = quotas.seriesPerRequest;
  if (limit > 0 && series > limit)
    throw exceeded(
      413,
      'seriesPerRequest',
      limit,
      `the request has ${series} series; the principal of this API key may send at most ${limit} in one request`,
      'body.series',
    );
}

/** 413 when a forecast job would make more forecasts (series x creation dates) than the principal's jobs may. */
export function requireForecastsWithin(quotas: Quotas, forecasts: number): void {
  const limit = quotas.forecastsPerJob;
  if (limit > 0 && forecasts > limit)
    throw exceeded(
      413,
      'forecastsPerJob',
      limit,
      `the job would make ${forecasts} forecasts (series x forecast creation dates); a job of this API key's principal may make at most ${limit}; split it into several jobs`,
      'body.series',
    );
}

/** How long a client refused for its concurrent jobs is asked to wait: a hint, since nobody knows when a job ends. */
export const CONCURRENT_JOBS_RETRY_AFTER_S = 5;

/** 429 when the principal already has as many jobs in progress as it may. */
export function concurrentJobsExceeded(limit: number): HttpError {
  return exceeded(
    429,
    'concurrentJobs',
    limit,
    `the principal of this API key already has ${limit} jobs in progress, as many as it may; submit again once one has finished, or cancel or delete one`,
    undefined,
    CONCURRENT_JOBS_RETRY_AFTER_S,
  );
}

/** 429 when so many submissions of one principal arrive at once that what they count (its jobs in progress, its schedules) cannot be counted in time. */
export function tooManySubmissionsAtOnce(counted = 'its jobs in progress'): HttpError {
  return new HttpError(
    429,
    'too_many_submissions',
    `too many submissions of this API key's principal arrive at once to count ${counted}; retry shortly`,
    null,
    {
      retryAfterSeconds: 1,
    },
  );
}

/** 429 when so many changes and triggers of one schedule arrive at once that they cannot take their turns in time. */
export function scheduleBusy(): HttpError {
  return new HttpError(429, 'too_many_submissions', 'too many changes and triggers of this schedule arrive at once to take their turns; retry shortly', null, {
    retryAfterSeconds: 1,
  });
}

/** 413 for a body or an upload larger than the principal may send (`bytes` when known). */
export function uploadExceeded(limit: number, bytes?: number): HttpError {
  const size = bytes === undefined ? 'the upload is larger than' : `the request body is ${bytes} bytes, more than`;
  return exceeded(413, 'uploadBytes', limit, `${size} the principal of this API key may send in one request (${limit} bytes)`, 'body');
}

/** The principal's upload limit where it is tighter than the server's own (`serverLimit`); null otherwise. */
export function tighterUploadLimit(quotas: Quotas, serverLimit: number): number | null {
  return quotas.uploadBytes > 0 && quotas.uploadBytes < serverLimit ? quotas.uploadBytes : null;
}

/** Counts a body's bytes as it is read and stops it past `limit`. */
function byteLimit(limit: number): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > limit) done(uploadExceeded(limit));
      else done(null, chunk);
    },
  });
}

const isMultipart = (request: FastifyRequest) => /^multipart\//i.test(request.headers['content-type'] ?? '');
const hasBody = (request: FastifyRequest) => request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined;

/**
 * The upload_bytes quota on request bodies: refused from the Content-Length alone when it says
 * enough, else counted as the body is read. Multipart bodies are read by the beta routes
 * themselves, which apply the same quota to the upload's data parts (routes/beta.ts).
 */
export const uploadQuotaPlugin = fp(async (app: FastifyInstance, opts: { quotas: QuotaPolicy; serverLimit: number }) => {
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (!request.principal || !hasBody(request) || isMultipart(request)) return payload;
    const limit = tighterUploadLimit(opts.quotas.of(request.principal), opts.serverLimit);
    if (limit === null) return payload;
    const length = Number(request.headers['content-length']);
    if (length > limit) throw uploadExceeded(limit, length);
    const counted = byteLimit(limit);
    // Errors of either stream reach the parser through `counted`, which answers them as the body's.
    return pipeline(payload as Readable, counted, () => undefined) as unknown as typeof payload;
  });
});

/** 429 when the principal already keeps as many schedules as it may. */
export function schedulesExceeded(limit: number): HttpError {
  return exceeded(429, 'schedules', limit, `the principal of this API key already has ${limit} schedules, as many as it may; delete one first`);
}
