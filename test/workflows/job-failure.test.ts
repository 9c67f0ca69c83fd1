import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { expect, test } from 'vitest';
import { jobFailure, UNEXPECTED_FAILURE } from '../../workflows/forecast-job.ts';

/** What a failed job tells its poller: deliberate failures as they were raised, unexpected ones in our words. */

const afterRetries = (cause: Error) => new ActivityFailure('activity failed', 'runChunk', '3', RetryState.MAXIMUM_ATTEMPTS_REACHED, undefined, cause);
const thrown = (err: unknown) => {
  try {
    jobFailure(err);
  } catch (failure) {
    return failure as ApplicationFailure;
  }
  throw new Error('jobFailure returned');
};

test("an unexpected error's own words (SQL, paths) stay in the history, not in the poller's message", () => {
  const raw = ApplicationFailure.retryable('Binder Error: Ambiguous reference to column name "sid" (SELECT ... FROM beta_input)', 'Error');
  const failure = thrown(afterRetries(raw));
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({ message: UNEXPECTED_FAILURE, type: 'internal_error', nonRetryable: true });
  expect(failure.cause?.cause).toBe(raw);
});

test('a deliberate failure keeps its code and message', () => {
  const refused = ApplicationFailure.nonRetryable("model 'theta' cannot forecast series 3: too short", 'invalid_request');
  expect(thrown(afterRetries(refused))).toMatchObject({ message: refused.message, type: 'invalid_request', nonRetryable: true });
});
