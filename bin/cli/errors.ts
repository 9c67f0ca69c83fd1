/**
 * How the `forecast` CLI ends: the exit codes it documents (docs/dashboard-and-cli.md, "Command line") and the
 * failures it reports in a few lines instead of a stack trace.
 */

export const EXIT = {
  ok: 0,
  /** The service refused or failed the call, the job failed, or the service could not be reached. */
  failed: 1,
  /** The command line or the input file is wrong; nothing was sent. */
  usage: 2,
  /** Interrupted while waiting (Ctrl-C); the job goes on. */
  interrupted: 130,
} as const;

/** A failure the CLI reports as its message (first line) and further lines, then exits with its code. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }

  report(): string[] {
    return [`error: ${this.message}`, ...this.details.map((line) => `  ${line}`)];
  }
}

/** The command line or the input file is wrong (exit 2). */
export class UsageError extends CliError {
  constructor(message: string, details: readonly string[] = []) {
    super(message, EXIT.usage, details);
  }
}

/** An application/problem+json answer (reference 2.7): its title, detail and field errors. */
export interface Problem {
  title?: string;
  status?: number;
  code?: string;
  detail?: string | null;
  errors?: { path: string; message: string }[] | null;
}

/** Says where a field path of the request points in the caller's own data (a series' unique_id, a row of the file). */
export type PathDescriber = (path: string) => string | undefined;

/** The service answered with a problem: printed as its title, detail and each field path with its message. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly problem: Problem,
    private readonly hint: string | undefined = undefined,
    private readonly describePath: PathDescriber | undefined = undefined,
  ) {
    super(`${problem.title ?? `HTTP ${status}`} (${status}${problem.code ? ` ${problem.code}` : ''})`, EXIT.failed);
  }

  /** The same problem, its field paths explained against the caller's data. */
  withPaths(describePath: PathDescriber): ApiError {
    return new ApiError(this.status, this.problem, this.hint, describePath);
  }

  override report(): string[] {
    const lines = [`error: ${this.message}`];
    if (this.problem.detail) lines.push(`  ${this.problem.detail}`);
    for (const field of this.problem.errors ?? []) {
      const where = this.describePath?.(field.path);
      lines.push(`  ${field.path}${where ? ` (${where})` : ''}: ${field.message}`);
    }
    if (this.hint) lines.push(`  ${this.hint}`);
    return lines;
  }
}
