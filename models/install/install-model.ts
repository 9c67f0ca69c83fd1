/**
 * `models install <name>`: a foundation model from its reference checkpoint to a verified, warmed
 * install in MODELS_DIR, in one command (docs/decisions/075-one-command-install.md):
 *
 * 1. the checkpoint: a local folder (`--checkpoint`), or the reference repository's files from the
 *    Hub, downloaded resumably and checked against the Hub's hashes (hub-download.ts);
 * 2. the export environment its requirements file names, set up once (export-tools.ts);
 * 3. the export into a staging folder of MODELS_DIR, checked against the reference forward;
 * 4. the warm-up of the staged model (warm-up.ts), then the rename into place (model-folder.ts).
 *
 * A failure at any step leaves MODELS_DIR as it was: a previous install stays, and no staging
 * folder remains. Downloaded files stay for the next run until an install succeeds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { availability, modelEntry, modelEntries } from '../contract/model-registry.ts';
import type { ModelSettings } from '../contract/model-interface.ts';
import { inspectModel, MANIFESTS, type FoundationName } from '../families/foundation/model-store.ts';
import { EXPORT_RECIPES, type ExportRecipe } from './export-recipes.ts';
import { exportEnvironment, runExport, toolsRoot } from './export-tools.ts';
import { checkRepoId, HubClient, type HubSettings } from './hub-client.ts';
import { downloadCheckpoint } from './hub-download.ts';
import { InstallError } from './install-error.ts';
import { writeInstallRecord, type InstallSource } from './install-record.ts';
import { folderBytes, lockModel, stagingFolder, swapIntoPlace } from './model-folder.ts';
import type { InstallReporter } from './progress.ts';
import { warmUp, type WarmUp } from './warm-up.ts';

export type CheckpointChoice =
  { readonly kind: 'hub'; readonly repo?: string; readonly revision?: string } | { readonly kind: 'checkpoint'; readonly path: string };

export interface InstallSettings {
  /** MODELS_DIR and how sessions run (for the warm-up). */
  readonly models: ModelSettings;
  readonly hub: HubSettings;
  /** Where Hub checkpoints are downloaded (MODEL_DOWNLOADS_DIR). */
  readonly downloadsDir: string;
}

export interface InstalledModelSummary {
  readonly folder: string;
  readonly bytes: number;
  readonly source: InstallSource;
  readonly warmUp: WarmUp;
}

const isFoundationName = (name: string): name is FoundationName => Object.hasOwn(MANIFESTS, name);

/** The recipe of a model that can be installed; anything else is a usage error that says why. */
export function recipeFor(name: string): ExportRecipe {
  if (isFoundationName(name)) return EXPORT_RECIPES[name];
  const entry = modelEntry(name);
  const installable = modelEntries()
    .map((e) => e.name)
    .filter(isFoundationName);
  if (!entry) throw new InstallError(`there is no model '${name}'; models that can be installed: ${installable.join(', ')}`, 'usage');
  const found = availability(entry, { modelsDir: '', onnxThreads: 1 });
  if (found.runnable) throw new InstallError(`${name} is built in: it runs without installing anything`, 'usage');
  throw new InstallError(`${name} cannot be installed: ${found.reason}`, 'usage');
}

/** What export.py's --checkpoint gets from a checkpoint folder (or file), checked before anything runs. */
function checkpointArgument(name: string, recipe: ExportRecipe, location: string): string {
  if (!fs.existsSync(location)) throw new InstallError(`the checkpoint ${location} does not exist`, 'usage');
  if (fs.statSync(location).isFile()) {
    if (recipe.checkpointFile !== null) return location;
    throw new InstallError(`${name} reads a checkpoint folder (${recipe.requiredFiles.join(', ')}); ${location} is a file`, 'usage');
  }
  const missing = recipe.requiredFiles.filter((file) => !fs.existsSync(path.join(location, file)));
  if (missing.length > 0) {
    throw new InstallError(
      `the checkpoint folder ${location} has no ${missing.join(', ')}: ${name}'s export reads ${recipe.requiredFiles.join(', ')}`,
      'usage',
    );
  }
  return recipe.checkpointFile === null ? location : path.join(location, recipe.checkpointFile);
}

interface FetchedCheckpoint {
  /** The folder (or file) handed to export.py. */
  readonly argument: string;
  readonly source: InstallSource;
  /** What the manifest's `version` and `source` say; absent: export.py's defaults (the folder's name and path). */
  readonly version?: string;
  readonly sourceText?: string;
  /** Deleted once the install succeeded: a download, not the user's own folder. */
  readonly downloaded: string | null;
}

async function fetchCheckpoint(
  name: string,
  recipe: ExportRecipe,
  choice: CheckpointChoice,
  settings: InstallSettings,
  reporter: InstallReporter,
  signal: AbortSignal,
): Promise<FetchedCheckpoint> {
  if (choice.kind === 'checkpoint') {
    const location = path.resolve(choice.path);
    return { argument: checkpointArgument(name, recipe, location), source: { kind: 'checkpoint', path: location }, downloaded: null };
  }
  const repo = choice.repo ?? recipe.hub?.repo;
  if (!repo) throw new InstallError(recipe.hubMissing ?? `${name}'s checkpoint is not on the Hub; install it with --checkpoint`, 'usage');
  checkRepoId(repo);
  const revision = choice.revision ?? recipe.hub?.revision ?? 'main';
  const files = recipe.hub?.files ?? recipe.requiredFiles;
  const client = new HubClient(settings.hub, signal);
  const got = await downloadCheckpoint(client, repo, revision, files, settings.downloadsDir, reporter);
  return {
    argument: checkpointArgument(name, recipe, got.folder),
    source: {
      kind: 'hub',
      endpoint: client.endpoint,
      repo,
      revision,
      commit: got.commit,
      files: got.files.map((f) => ({ path: f.path, bytes: f.size, sha256: f.sha256, git_oid: f.gitOid })),
    },
    version: `${repo}@${got.commit.slice(0, 12)}`,
    sourceText: `${client.endpoint}/${repo} at commit ${got.commit}`,
    downloaded: got.folder,
  };
}

export async function installModel(
  name: string,
  choice: CheckpointChoice,
  settings: InstallSettings,
  reporter: InstallReporter,
  signal: AbortSignal,
): Promise<InstalledModelSummary> {
  const recipe = recipeFor(name);
  const root = toolsRoot();
  const { modelsDir } = settings.models;
  const unlock = lockModel(modelsDir, name);
  let staging: string | null = null;
  try {
    const checkpoint = await fetchCheckpoint(name, recipe, choice, settings, reporter, signal);
    const python = await exportEnvironment(root, recipe, reporter, signal);
    staging = stagingFolder(modelsDir, name);
    const exportJob = { name, checkpoint: checkpoint.argument, out: staging, version: checkpoint.version, source: checkpoint.sourceText };
    await runExport(root, python, recipe, exportJob, reporter, signal);
    const staged = path.join(staging, name);
    const inspection = inspectModel(name as FoundationName, staging);
    if (!inspection.ok) throw new InstallError(`the export of ${name} wrote a model the service refuses: ${inspection.hint}`);
    writeInstallRecord(staged, {
      format: 1,
      model: name,
      installed_at: new Date().toISOString(),
      source: checkpoint.source,
      export_environment: recipe.requirements,
    });
    const stage = reporter.stage('warm-up');
    const warmed = await warmUp(name, { ...settings.models, modelsDir: staging }).catch((error) => {
      stage.end(null);
      throw error;
    });
    stage.end(`${Math.round(warmed.ms)} ms${warmed.provider ? ` on ${warmed.provider}` : ''}`);
    swapIntoPlace(staged, modelsDir, name);
    if (checkpoint.downloaded) fs.rmSync(checkpoint.downloaded, { recursive: true, force: true });
    const folder = path.join(modelsDir, name);
    return { folder, bytes: folderBytes(folder), source: checkpoint.source, warmUp: warmed };
  } finally {
    if (staging) fs.rmSync(staging, { recursive: true, force: true });
    unlock();
  }
}
