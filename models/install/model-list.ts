/**
 * `models list` and `models remove`: every model the registry knows, in its order, with what an
 * operator needs: whether it runs here (its export installed and verified), the command that
 * installs it, or what is wrong with it (the operator's hint, docs/decisions/071-no-server-paths-for-clients.md);
 * its size on disk and where its weights came from.
 */
import fs from 'node:fs';
import path from 'node:path';
import { availability, modelEntries, operatorHint } from '../contract/model-registry.ts';
import type { ModelSettings } from '../contract/model-interface.ts';
import { MANIFEST_FILE } from '../families/foundation/model-store.ts';
import { InstallError } from './install-error.ts';
import { describeSource, readInstallRecord } from './install-record.ts';
import { folderBytes, lockModel, removeFolder } from './model-folder.ts';
import { recipeFor } from './install-model.ts';

export type ModelState = 'built in' | 'installed, verified' | 'not installed' | 'broken' | 'unavailable';

export interface ModelListing {
  readonly name: string;
  readonly state: ModelState;
  /** Bytes of its folder in MODELS_DIR; null when it has none. */
  readonly bytes: number | null;
  /** Where its weights came from (install.json, else the manifest's `source`); null when unknown. */
  readonly source: string | null;
  /** What to do about it: the install command, the operator's hint, or why it cannot run here. */
  readonly hint: string | null;
}

/** The command that installs `name`: from the Hub where its checkpoint is there, else from a local folder. */
export function installCommand(name: string, command: string): string {
  return recipeFor(name).hub ? `${command} install ${name} --from-hub` : `${command} install ${name} --checkpoint <checkpoint folder>`;
}

function sourceOf(folder: string, hubEndpoint: string): string | null {
  const record = readInstallRecord(folder);
  if (record) return describeSource(record.source, hubEndpoint);
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, MANIFEST_FILE), 'utf8')) as { source?: unknown };
    return typeof manifest.source === 'string' ? manifest.source : null;
  } catch {
    return null;
  }
}

/**
 * Every known model. `command` is how this command line is called (`npm run models --`,
 * `forecast models`), for the install commands it prints.
 */
export function listModels(settings: ModelSettings, hubEndpoint: string, command: string): ModelListing[] {
  return modelEntries().map((entry): ModelListing => {
    const found = availability(entry, settings);
    if (!entry.inspectExport) {
      if (found.runnable) return { name: entry.name, state: 'built in', bytes: null, source: null, hint: null };
      return { name: entry.name, state: 'unavailable', bytes: null, source: null, hint: found.reason };
    }
    const folder = path.join(settings.modelsDir, entry.name);
    const onDisk = fs.existsSync(folder) ? { bytes: folderBytes(folder), source: sourceOf(folder, hubEndpoint) } : { bytes: null, source: null };
    if (found.runnable) return { name: entry.name, state: 'installed, verified', ...onDisk, hint: null };
    if (found.export === 'failed_verification') {
      return { name: entry.name, state: 'broken', ...onDisk, hint: `${operatorHint(entry.name, settings)}; reinstall: ${installCommand(entry.name, command)}` };
    }
    return { name: entry.name, state: 'not installed', ...onDisk, hint: `install: ${installCommand(entry.name, command)}` };
  });
}

/** Deletes an installed model's folder; false when it was not installed. */
export function removeModel(name: string, modelsDir: string): boolean {
  recipeFor(name);
  if (!fs.existsSync(modelsDir)) return false;
  const unlock = lockModel(modelsDir, name);
  try {
    return removeFolder(modelsDir, name);
  } catch (error) {
    throw new InstallError(`cannot remove ${path.join(modelsDir, name)}: ${(error as Error).message}`);
  } finally {
    unlock();
  }
}
