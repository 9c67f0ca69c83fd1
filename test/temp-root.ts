import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Vitest global set-up: one folder for the data directories the tests create (`testTempDir`),
 * removed when the run ends. Many tests build a server in a hook, where a per-file cleanup cannot
 * be registered, and without this each run left about 85 folders in the system temp dir. The
 * folder reaches the test workers through the environment, which they inherit.
 */
export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'forecast-tests-'));
  process.env.FORECAST_TEST_TEMP_ROOT = root;
  return () => fs.rmSync(root, { recursive: true, force: true });
}

/** A new folder under the run's temp root (the system temp dir when run without the set-up). */
export function testTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(process.env.FORECAST_TEST_TEMP_ROOT ?? os.tmpdir(), prefix));
}
