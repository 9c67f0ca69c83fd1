/**
 * How `models install`, `list` and `remove` fail: a sentence naming the problem and, where there
 * is more to say, lines of detail (a tool's last output, what to do next). The command line
 * prints them; nothing else of the failure (no stack trace) reaches the user.
 */
export class InstallError extends Error {
  override readonly name: string = 'InstallError';
  constructor(
    message: string,
    /** `usage`: the command was wrong (an unknown model, a missing folder); nothing was changed. */
    readonly kind: 'usage' | 'failed' | 'interrupted' = 'failed',
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }
}

/** Ctrl-C: the install stopped and cleaned up after itself. */
export const interrupted = (): InstallError =>
  new InstallError('interrupted: nothing was installed; what was downloaded stays, and the next run resumes it', 'interrupted');

export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** A failure that may pass: the connection broke, or the Hub answered 429 or 5xx. A download tries again. */
export class TransientError extends InstallError {
  override readonly name = 'TransientError';
}
