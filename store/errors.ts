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
