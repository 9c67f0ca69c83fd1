import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';
import { removeAbandonedStaging, stagingFile } from '../../store/staging-files.ts';
import { testTempDir } from '../temp-root.ts';

/** The id of a process that has run and exited. */
async function endedProcessId(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

test("the sweep removes the staging files of processes that have ended; its own, a live process's and other files stay", async () => {
  const dir = testTempDir('staging-');
  const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
  try {
    const ended = await endedProcessId();
    const files = {
      ownFile: stagingFile(dir),
      endedFile: path.join(dir, `store-put-${ended}-abc`),
      liveFile: path.join(dir, `store-put-${sleeper.pid}-def`),
      unrelated: path.join(dir, `store-put-notes.txt`),
    };
    expect(path.basename(files.ownFile)).toMatch(new RegExp(`^store-put-${process.pid}-\\w+$`));
    for (const file of Object.values(files)) fs.writeFileSync(file, 'part');

    expect(await removeAbandonedStaging(dir)).toEqual([path.basename(files.endedFile)]);
    expect(fs.existsSync(files.endedFile)).toBe(false);
    for (const file of [files.ownFile, files.liveFile, files.unrelated]) expect(fs.existsSync(file)).toBe(true);
  } finally {
    sleeper.kill('SIGKILL');
  }
});

test('a folder that cannot be read is no error: nothing is removed', async () => {
  expect(await removeAbandonedStaging(path.join(testTempDir('staging-'), 'absent'))).toEqual([]);
});
