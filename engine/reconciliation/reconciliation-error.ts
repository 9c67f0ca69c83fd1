/**
 * What reconciliation refuses, in its own terms: a code, a message that names the series, level
 * or option at fault, and the option's path inside the `reconciliation` object when an option is
 * at fault. No HTTP here: the API maps codes to problem+json answers.
 */

export type ReconciliationErrorCode =
  /** `method` names no reconciliation method. */
  | 'unknown_method'
  /** An option (`estimator`, `proportions`) names no choice of its method. */
  | 'unknown_option'
  /** top_down and middle_out disaggregate along single parents: a grouped structure has several. */
  | 'not_a_tree'
  /** A level, or a series of a level, has nothing to reconcile: no series, no bottoms, no forecast. */
  | 'level_without_data'
  /** In-sample residuals or history are missing or too short for the estimator. */
  | 'too_few_observations'
  /** The weight matrix leaves the constraint system singular. */
  | 'ill_conditioned'
  /** Inputs whose shapes disagree (a caller's bug rather than a user's choice). */
  | 'invalid_input';

export class ReconciliationError extends Error {
  override readonly name = 'ReconciliationError';
  constructor(
    readonly code: ReconciliationErrorCode,
    message: string,
    /** The option at fault inside the `reconciliation` object, e.g. `['estimator']`; empty when no option is. */
    readonly path: readonly string[] = [],
  ) {
    super(message);
  }
}
