import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { IdempotencyRecord, IdempotencyRecords } from '../store/idempotency-records.ts';
import { HttpError } from './problem.ts';

/**
 * Idempotent job submissions (docs/operations.md, "Idempotent submissions"), after the IETF draft
 * "The Idempotency-Key HTTP Header Field": a job submission with an `Idempotency-Key` creates at
 * most one job for that key and its principal while the key lives (IDEMPOTENCY_KEY_TTL); the same
 * key with the same request answers that job again, with another request 422, and while the first
 * request is still creating its job 409.
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Says that an answer is the one an earlier request with the same key got. */
export const REPLAYED_HEADER = 'idempotent-replayed';
const HEADER_PATH = 'header.Idempotency-Key';
const MAX_KEY_LENGTH = 255;

/** A pending record this old belongs to a submission that died (its process stopped mid-way): a retry may take the key over. */
const PENDING_ABANDONED_MS = 15 * 60_000;
/** Expired records are deleted this long after they expired, so no request still acting on one sees it vanish. */
const SWEEP_GRACE_MS = 3_600_000;

function invalidKey(message: string): HttpError {
  return new HttpError(400, 'invalid_idempotency_key', `the Idempotency-Key header ${message}`, [{ path: HEADER_PATH, message }]);
}

/**
 * The request's Idempotency-Key, or null when it sends none. Sent bare (`abc-123`, as most clients
 * do) or as the draft's structured-field string (`"abc-123"`); 1 to 255 visible ASCII characters.
 */
export function idempotencyKey(request: FastifyRequest): string | null {
  const raw = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (raw === undefined) return null;
  // Node joins a repeated header with ", ", which the character check refuses below.
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  const key = /^".*"$/.test(value) ? value.slice(1, -1) : value;
  if (key.length === 0) throw invalidKey('is empty; send a unique value per request, such as a UUID');
  if (key.length > MAX_KEY_LENGTH) throw invalidKey(`is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are accepted`);
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(key))
    throw invalidKey('may hold only visible ASCII characters, without spaces, quotes or backslashes (send one key, such as a UUID)');
  return key;
}

/** JSON with every object's keys in order, so that the same document written differently reads the same. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** What identifies "the same request": the SHA-256 of its canonical JSON (kind, query, body or parts' hashes). */
export function requestFingerprint(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

const isExpired = (record: IdempotencyRecord, now: number) => Date.parse(record.expires_at) <= now;
const isAbandoned = (record: IdempotencyRecord, now: number) => record.state === 'pending' && now - Date.parse(record.created_at) > PENDING_ABANDONED_MS;

function reused(key: string, record: IdempotencyRecord): HttpError {
  const message = `was used at ${record.created_at} for another request (job ${record.job_id}); a key stands for one request: send a new key for a new one`;
  return new HttpError(422, 'idempotency_key_reused', `the Idempotency-Key '${key}' ${message}`, [{ path: HEADER_PATH, message }]);
}

function inProgress(key: string): HttpError {
  return new HttpError(409, 'idempotency_key_in_use', `a request with the Idempotency-Key '${key}' is still creating its job; retry shortly to get it`, null, {
    retryAfterSeconds: 1,
  });
}

export interface Submission {
  jobId: string;
  /** True when the job was created by an earlier request with the same key. */
  replayed: boolean;
}

export class IdempotentSubmissions {
  constructor(
    private readonly records: IdempotencyRecords,
    /** Whether a job's metadata is in the store: what an abandoned submission got done. */
    private readonly jobExists: (jobId: string) => Promise<boolean>,
    private readonly ttlMs: number,
  ) {}

  /**
   * Creates a job with `create` (given the job id to use), unless the principal's key already
   * stands for one. Of concurrent requests with one key, exactly one runs `create`: the record is
   * claimed with the store's create-if-absent before it runs, and released if it fails.
   */
  async submit(principal: string, key: string | null, fingerprint: string, create: (jobId?: string) => Promise<string>): Promise<Submission> {
    if (key === null) return { jobId: await create(), replayed: false };
    // A claim lost to another request is settled by reading the winner's record; a third round
    // only happens if the winner released the key in between.
    for (let round = 0; round < 3; round++) {
      const now = Date.now();
      const current = await this.records.read(principal, key);
      if (current && !isExpired(current, now)) {
        if (current.fingerprint !== fingerprint) throw reused(key, current);
        if (current.state === 'created') {
          // A job deleted since (DELETE, JOB_RETENTION) frees its key: the request starts a new job.
          if (await this.jobExists(current.job_id)) return { jobId: current.job_id, replayed: true };
        } else {
          if (!isAbandoned(current, now)) throw inProgress(key);
          // Its process died after storing the job (its workflow may run): that job is the key's.
          if (await this.jobExists(current.job_id)) {
            await this.records.commit(current);
            return { jobId: current.job_id, replayed: true };
          }
        }
      }
      const record = this.records.draft(principal, key, fingerprint, this.ttlMs, now);
      const claimed = current ? await this.records.replace(current, record) : await this.records.create(record);
      if (!claimed) continue;
      try {
        await create(record.job_id);
      } catch (error) {
        await this.records.release(record).catch(() => undefined);
        throw error;
      }
      await this.records.commit(record);
      return { jobId: record.job_id, replayed: false };
    }
    throw inProgress(key);
  }

  /** Deletes long-expired records now and then (they no longer mean anything); returns a stop function. */
  sweepExpired(onError: (error: unknown) => void): () => void {
    const sweep = () => void this.records.removeExpired(Date.now() - SWEEP_GRACE_MS).catch(onError);
    const timer = setInterval(sweep, Math.max(1_000, Math.min(this.ttlMs / 10, 3_600_000)));
    timer.unref();
    sweep();
    return () => clearInterval(timer);
  }
}
