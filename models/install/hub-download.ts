/**
 * Downloads a checkpoint's files from the Hub into a folder of their own, resumably and checked:
 * bytes go to `<file>.part`, which a broken connection, or the next run, continues with a Range
 * request; a complete file must have the size and hash the Hub's listing gives (the SHA-256 of an
 * LFS file, the git blob id of a small one) before it takes its name. A file that fails its check
 * is deleted. docs/decisions/076-checkpoint-downloads.md.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { HubClient, HubFile } from './hub-client.ts';
import { InstallError, interrupted, messageOf, TransientError } from './install-error.ts';
import type { InstallReporter } from './progress.ts';

/** Tries per file while each try brings new bytes; a try that brings none counts against it. */
const TRIES_WITHOUT_PROGRESS = 4;
const RETRY_PAUSE_MS = 300;

export interface DownloadedCheckpoint {
  readonly folder: string;
  readonly commit: string;
  readonly files: readonly HubFile[];
}

/** The folder a repository's commit downloads into: `owner--name@commit`, as the Hub's own cache names it. */
export const downloadFolder = (downloadsDir: string, repo: string, commit: string) => path.join(downloadsDir, `${repo.replace('/', '--')}@${commit}`);

export async function downloadCheckpoint(
  client: HubClient,
  repo: string,
  revision: string,
  wanted: readonly string[],
  downloadsDir: string,
  reporter: InstallReporter,
): Promise<DownloadedCheckpoint> {
  const commit = await client.commitOf(repo, revision);
  reporter.note(`${repo} at ${revision} is commit ${commit}`);
  const listed = new Map((await client.files(repo, commit)).map((f) => [f.path, f]));
  const missing = wanted.filter((name) => !listed.has(name));
  if (missing.length > 0) {
    throw new InstallError(`${repo} at ${revision} has no ${missing.join(', ')}: this export reads ${wanted.join(', ')}`, 'failed', [
      `its files: ${[...listed.keys()].join(', ') || 'none'}`,
    ]);
  }
  const folder = downloadFolder(downloadsDir, repo, commit);
  const files = wanted.map((name) => listed.get(name)!);
  for (const file of files) await downloadFile(client, repo, commit, file, folder, reporter);
  return { folder, commit, files };
}

/** Where a listed file goes: inside the folder, whatever its path says. */
function localPath(folder: string, file: HubFile): string {
  const target = path.resolve(folder, file.path);
  if (!target.startsWith(folder + path.sep)) throw new InstallError(`the Hub lists a file outside its repository: '${file.path}'`);
  return target;
}

const sizeOnDisk = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

async function downloadFile(client: HubClient, repo: string, commit: string, file: HubFile, folder: string, reporter: InstallReporter): Promise<void> {
  const target = localPath(folder, file);
  const part = `${target}.part`;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // A file a previous run completed is checked again rather than trusted.
  if (fs.existsSync(target)) fs.renameSync(target, part);
  if (sizeOnDisk(part) > file.size) fs.rmSync(part);
  const step = reporter.bytes(file.path, file.size, sizeOnDisk(part));
  try {
    let stalled = 0;
    while (sizeOnDisk(part) < file.size) {
      const before = sizeOnDisk(part);
      try {
        await fetchRest(client, repo, commit, file, part, (done) => step.update(done));
      } catch (error) {
        if (!(error instanceof TransientError)) throw error;
        stalled = sizeOnDisk(part) > before ? 0 : stalled + 1;
        if (stalled >= TRIES_WITHOUT_PROGRESS) {
          throw new InstallError(
            `the download of ${file.path} from ${repo} broke off at ${sizeOnDisk(part)} of ${file.size} bytes: ${error.message}`,
            'failed',
            ['what arrived is kept; run the same command again to resume it'],
          );
        }
        reporter.note(`${file.path}: ${error.message}; resuming at byte ${sizeOnDisk(part)}`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS * (stalled + 1)));
      }
    }
    await verify(part, file, repo, commit);
    fs.renameSync(part, target);
    step.end('verified');
  } catch (error) {
    step.end(null);
    throw error;
  }
}

/** One request for the bytes `part` lacks, appended to it; throws TransientError when the connection breaks. */
async function fetchRest(client: HubClient, repo: string, commit: string, file: HubFile, part: string, progress: (done: number) => void): Promise<void> {
  let offset = sizeOnDisk(part);
  const answer = await client.file(repo, commit, file.path, offset);
  // The Hub's ETag is the content's SHA-256 (LFS) or git blob id; a mirror may send one of its own making, which is not compared.
  const known = [file.sha256, file.gitOid];
  if (answer.etag !== null && /^([0-9a-f]{40}|[0-9a-f]{64})$/.test(answer.etag) && !known.includes(answer.etag)) {
    await answer.response.body?.cancel();
    throw new InstallError(
      `the Hub serves ${file.path} of ${repo} as ${answer.etag}, but its file list says ${file.sha256 ?? file.gitOid}: the repository's listing and content disagree`,
    );
  }
  if (answer.size !== null && answer.size !== file.size) {
    await answer.response.body?.cancel();
    throw new InstallError(`the Hub serves ${file.path} of ${repo} with ${answer.size} bytes, but its file list says ${file.size}`);
  }
  const start = answer.response.status === 206 ? Number(/bytes (\d+)-/.exec(answer.response.headers.get('content-range') ?? '')?.[1]) : 0;
  if (start !== offset) {
    // A server that ignores Range (200) or starts elsewhere: the file is fetched from its start.
    if (start !== 0) {
      await answer.response.body?.cancel();
      throw new TransientError(`the server answered a request from byte ${offset} with bytes from ${start}`);
    }
    fs.truncateSync(part, 0);
    offset = 0;
  }
  const out = fs.openSync(part, offset > 0 ? 'a' : 'w');
  try {
    for await (const chunk of answer.response.body ?? []) {
      fs.writeSync(out, chunk);
      offset += chunk.length;
      progress(offset);
    }
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw interrupted();
    throw new TransientError(`the connection broke (${messageOf((error as { cause?: unknown }).cause ?? error)})`);
  } finally {
    fs.closeSync(out);
  }
}

/** A git blob's id: SHA-1 of `blob <size>\0` and the content. */
function gitBlobHash(size: number): Hash {
  return createHash('sha1').update(`blob ${size}\0`);
}

async function verify(part: string, file: HubFile, repo: string, commit: string): Promise<void> {
  const size = sizeOnDisk(part);
  const hash = file.sha256 ? createHash('sha256') : gitBlobHash(size);
  for await (const chunk of fs.createReadStream(part)) hash.update(chunk as Buffer);
  const got = hash.digest('hex');
  const expected = file.sha256 ?? file.gitOid;
  if (size === file.size && got === expected) return;
  fs.rmSync(part, { force: true });
  const kind = file.sha256 ? 'SHA-256' : 'git blob id';
  throw new InstallError(`${file.path} of ${repo} at ${commit.slice(0, 12)} failed its check: ${kind} ${got}, the Hub lists ${expected}`, 'failed', [
    'the file was deleted. Run the command again to download it afresh; if it fails again, the server at HF_ENDPOINT serves a corrupted file',
  ]);
}
