/**
 * A model's folder in MODELS_DIR, changed only by renames: an export is made in a staging folder
 * inside MODELS_DIR (the same file system), then renamed into place; the install it replaces is
 * renamed aside first and deleted once the new one is in place. A removal renames the folder
 * aside, then deletes it. So the service never reads a half-written model.
 * docs/decisions/077-atomic-installs.md.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InstallError } from './install-error.ts';

/** MODELS_DIR's own working entries start with a dot: no model name does. */
const hidden = (modelsDir: string, what: string, name: string) => path.join(modelsDir, `.${what}-${name}-${randomBytes(4).toString('hex')}`);

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds `MODELS_DIR/.install-<name>.lock` while a model is installed or removed, so that two runs
 * do not swap folders under each other. A lock whose process has gone is taken over.
 */
export function lockModel(modelsDir: string, name: string): () => void {
  fs.mkdirSync(modelsDir, { recursive: true });
  const lock = path.join(modelsDir, `.install-${name}.lock`);
  for (let tries = 0; tries < 2; tries++) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(fs.readFileSync(lock, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && processAlive(holder)) {
        throw new InstallError(`another install or removal of ${name} is running (process ${holder}); wait for it to end`);
      }
      fs.rmSync(lock, { force: true });
    }
  }
  throw new InstallError(`cannot take the lock ${lock}`);
}

/** A new, empty staging folder inside MODELS_DIR. */
export function stagingFolder(modelsDir: string, name: string): string {
  const dir = hidden(modelsDir, 'staging', name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Puts `staged` at MODELS_DIR/<name>, replacing what was there only once the rename succeeded. */
export function swapIntoPlace(staged: string, modelsDir: string, name: string): void {
  const target = path.join(modelsDir, name);
  const aside = fs.existsSync(target) ? hidden(modelsDir, 'replaced', name) : null;
  if (aside) fs.renameSync(target, aside);
  try {
    fs.renameSync(staged, target);
  } catch (error) {
    if (aside) fs.renameSync(aside, target);
    throw error;
  }
  if (aside) fs.rmSync(aside, { recursive: true, force: true });
}

/** Deletes MODELS_DIR/<name>: renamed aside first, so that no reader sees it half deleted. Returns false when there was none. */
export function removeFolder(modelsDir: string, name: string): boolean {
  const target = path.join(modelsDir, name);
  if (!fs.existsSync(target)) return false;
  const aside = hidden(modelsDir, 'removing', name);
  fs.renameSync(target, aside);
  fs.rmSync(aside, { recursive: true, force: true });
  return true;
}

/** Bytes of every file under `dir`. */
export function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}
