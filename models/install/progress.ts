/**
 * What an install reports while it runs. The command line draws it (bin/cli/model-progress.ts):
 * bars on a terminal, plain lines in a log.
 */
export interface InstallReporter {
  /** A step whose size is known: one file's download, in bytes; `done` bytes are already there (a resumed download). */
  bytes(label: string, total: number, done: number): ByteStep;
  /** A step of unknown length: the export environment's set-up, the export, the warm-up. */
  stage(label: string): Stage;
  /** A line of its own: what a step's tool printed, or a note. */
  note(line: string): void;
}

export interface ByteStep {
  update(done: number): void;
  /** The step ended: `summary` says how (`verified`), or null when it failed. */
  end(summary: string | null): void;
}

export interface Stage {
  end(summary: string | null): void;
}
