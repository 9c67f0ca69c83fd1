/**
 * What the engine refuses or fails with, said in the engine's own terms: a kind and the fields at
 * fault. Fields are named by their path inside the call's inputs (the request, the model name,
 * an uploaded data part); the API alone decides where those inputs sit in HTTP (`body`,
 * `query.model`, `body.query` for the beta) and which status each kind is answered with. A job
 * records the kind as its failure code.
 */

/** Which input of a call a field belongs to: the request (stable body or beta query), the model name, or an uploaded part. */
export type FieldRoot = 'request' | 'model' | 'upload';

export type FieldPath = readonly (string | number)[];

export interface FieldError {
  readonly root: FieldRoot;
  /** Inside the root: `['series', 0, 'fcds', 2]`; an uploaded part is `[<part name>]`; the model name is `[]`. */
  readonly path: FieldPath;
  readonly message: string;
}

/** Where a field is, without a message yet (a data source says where errors about it point). */
export type FieldRef = Pick<FieldError, 'root' | 'path'>;

export type ErrorKind =
  /** The caller can fix the request. */
  | 'invalid_request'
  /** The model is known but cannot run on this server (no adapter, or its export is missing or broken). */
  | 'model_unavailable'
  /** A model failed on input it accepted: a server-side fault. */
  | 'forecast_failed'
  /** The data needs more working memory than this server may use. */
  | 'insufficient_memory'
  /** Object-store locators are enabled but cannot be read here. */
  | 'object_store_unavailable';

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly fields: readonly FieldError[] | null = null,
    /** What an operator must fix (a folder, a file, a setting): for the server's log, never the client's answer. */
    readonly operatorDetail: string | null = null,
  ) {
    super(message);
  }
}

export const requestField = (path: FieldPath, message: string): FieldError => ({ root: 'request', path, message });

/** A request the caller can fix, with every field at fault. */
export const invalidRequest = (message: string, fields: readonly FieldError[]): EngineError => new EngineError('invalid_request', message, fields);

/** A refusal about one field, whose message is the refusal's. */
export const refuseField = (at: FieldRef, message: string): EngineError => invalidRequest(message, [{ ...at, message }]);
