import { TestWorkflowEnvironment } from '@temporalio/testing';
import { defaultTemporalCli } from '../../api/config.ts';

/** A real Temporal dev server for a test file, from the CLI that set-up placed in the cache. */
export function startTestTemporal(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: defaultTemporalCli() } } });
}

export async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
