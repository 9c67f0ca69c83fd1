import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

/**
 * The benchmarks that run the service as deployed (an API and workers as processes): start one,
 * wait for it, and read its memory from /proc (Linux).
 */

/** A `/proc/<pid>/status` figure in bytes (`VmRSS`, `VmHWM`); NaN without the process. */
function statusBytes(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number {
  const status = pid ? fs.readFileSync(`/proc/${pid}/status`, 'utf8') : '';
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
  return kb ? Number(kb) * 1024 : NaN;
}

/** Resident memory of a live process now. */
export const residentMemory = (pid: number | undefined): number => statusBytes(pid, 'VmRSS');

/** Peak resident memory of a live process. */
export const peakRss = (pid: number | undefined): number => statusBytes(pid, 'VmHWM');

/** Runs one of the service's entry points from the sources, its output appended to `log`. */
export function startProcess(script: string, env: NodeJS.ProcessEnv, log: string): ChildProcess {
  const out = fs.openSync(log, 'a');
  return spawn(process.execPath, ['--import', 'tsx', script], { env, stdio: ['ignore', out, out] });
}

/** Polls `probe` until it answers true (a failed probe counts as false). */
export async function waitFor(probe: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
