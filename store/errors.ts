/**
 * The job store could not be reached (a bucket's server down, the network away, a 5xx): the
 * request may succeed later. The API answers 503 `storage_unavailable`; activities fail and
 * Temporal retries them.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(storeUrl: string, cause: unknown) {
    super(`the job store ${storeUrl} cannot be reached right now (${(cause as Error)?.message?.split('\n')[0] ?? String(cause)}); try again shortly`, {
      cause,
    });
  }
}

/** A document a job cannot be without (its request, query, plan or a chunk), or an error naming what is missing. */
export function required<T>(value: T | null, what: string): T {
  if (value === null) throw new Error(`${what} is missing from the job store`);
  return value;
}
