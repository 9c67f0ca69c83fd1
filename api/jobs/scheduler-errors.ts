import { isGrpcServiceError, ServiceError } from '@temporalio/client';

/**
 * gRPC codes meaning Temporal did not answer (down, restarting, unreachable, or too slow): the
 * client has already retried them (its default retry policy), and the request may succeed later.
 * Any other failure of a Temporal call is a real error (500).
 */
const NO_ANSWER = new Map([
  [4, 'DEADLINE_EXCEEDED'],
  [14, 'UNAVAILABLE'],
]);

/**
 * How long the API waits for any one Temporal call: a server that accepts connections but does
 * not answer (stopped, overloaded) is then a 503 too, as one that is down is after the client's
 * own retries, rather than a request that hangs.
 */
export const TEMPORAL_ANSWER_MS = 20_000;

/** How long a client should wait before trying again (s): a Temporal restart takes seconds. */
export const SCHEDULER_RETRY_AFTER_S = 5;

/**
 * The problem detail for a failure to reach Temporal (the job scheduler), or null when `error`
 * is anything else. The API answers it 503 `scheduler_unavailable`. The gRPC details name the
 * cluster's address: they go to the log, not to the client.
 */
export function schedulerUnreachable(error: unknown): string | null {
  const grpc = error instanceof ServiceError ? error.cause : error;
  if (!isGrpcServiceError(grpc) || !NO_ANSWER.has(grpc.code)) return null;
  return `the job scheduler (Temporal) cannot be reached right now (${NO_ANSWER.get(grpc.code)}); nothing was started or changed, try again shortly`;
}
