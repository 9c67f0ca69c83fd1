import { loadConfig, type Config } from '../config.ts';

/**
 * Start-up failures of the entry points: a setting that is wrong or missing, a store or a Temporal
 * that cannot be used. Each stops the process with one line, `Cannot start: ...`, naming the
 * setting at fault, and no stack trace.
 */
export function cannotStart(error: unknown): never {
  console.error(`Cannot start: ${(error as Error).message}`);
  process.exit(1);
}

/** The configuration, read once; a bad setting stops the start. */
export function loadConfigOrStop(): Config {
  try {
    return loadConfig();
  } catch (error) {
    return cannotStart(error);
  }
}
