import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Local files an upload to a bucket is produced into before its PUT (s3-bucket.ts). Each is
 * removed when its upload ends, but a process killed meanwhile (SIGKILL, the OOM killer, a
 * crashed host's restart) leaves its files behind, Parquet parts of up to a chunk's results, and
 * a worker killed again and again would fill the disk. So the names carry the writing process's
 * id, and the first staging of each process removes the files of processes that are gone.
 */

const PREFIX = 'store-put-';
const STAGING_NAME = new RegExp(`^${PREFIX}(\\d+)-`);

/** A fresh staging path in `dir` (the system's temporary folder by default) for this process. */
export function stagingFile(dir = os.tmpdir()): string {
  return path.join(dir, `${PREFIX}${process.pid}-${Math.random().toString(36).slice(2)}`);
}

/** Whether a process with this id runs (EPERM: it does, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the staging files in `dir` whose process no longer runs; returns their names. Another
 * process's live files are left alone (a reused id keeps a dead one's files until that one ends).
 * Process ids are this machine's: containers with their own ids need a temporary folder each.
 */
export async function removeAbandonedStaging(dir = os.tmpdir()): Promise<string[]> {
  const names = await fs.promises.readdir(dir).catch(() => [] as string[]);
  const abandoned = names.filter((name) => {
    const match = STAGING_NAME.exec(name);
    return match !== null && Number(match[1]) !== process.pid && !running(Number(match[1]));
  });
  await Promise.all(abandoned.map((name) => fs.promises.rm(path.join(dir, name), { force: true })));
  return abandoned;
}
