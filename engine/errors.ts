/** A field that failed a rule, with its path in the reference's form (`body.series[0].target`). */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * A request the engine refuses: the caller can fix it. The API answers it as problem+json with
 * the given status and code; a job records it as its failure.
 */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] | null = null,
  ) {
    super(message);
  }
}

/** A model failed on input it accepted: a server-side fault, reported without a stack. */
export class ForecastFailedError extends Error {
  override readonly name = 'ForecastFailedError';
}

/** `['series', 0, 'target']` -> `body.series[0].target` (the reference's dotted form). */
export function fieldPath(root: string, path: readonly PropertyKey[]): string {
  let out = root;
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
  return out;
}
