import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config.ts';
import { InstallError, messageOf } from '../../models/install/install-error.ts';
import { installModel, type CheckpointChoice, type InstalledModelSummary } from '../../models/install/install-model.ts';
import { describeSource } from '../../models/install/install-record.ts';
import { listModels, removeModel } from '../../models/install/model-list.ts';
import { EXIT } from './errors.ts';
import { formatBytes } from './long-format.ts';
import { modelProgress } from './model-progress.ts';
import { table } from './table.ts';

/**
 * Foundation models on this host, for `npm run models -- ...` and `forecast models ...` alike:
 * install one from its reference checkpoint (models/install/), list every model with its state,
 * remove one. They act on MODELS_DIR, as the service reads it, not over HTTP: run them on the
 * server's host (docs/decisions/075-one-command-install.md).
 */

interface InstallOptions {
  checkpoint?: string;
  fromHub?: string | true;
  revision?: string;
}

const EXIT_OF: Record<InstallError['kind'], number> = { usage: EXIT.usage, failed: EXIT.failed, interrupted: EXIT.interrupted };

/** Runs a command's work; a failure is its message and detail lines on stderr, never a stack trace. */
async function reporting(work: (config: Config) => Promise<number>): Promise<number> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`error: ${messageOf(error)}\n`);
    return EXIT.usage;
  }
  try {
    return await work(config);
  } catch (error) {
    const details = error instanceof InstallError ? error.details : [];
    process.stderr.write([`error: ${messageOf(error)}`, ...details.map((line) => `  ${line}`)].join('\n') + '\n');
    return error instanceof InstallError ? EXIT_OF[error.kind] : EXIT.failed;
  }
}

function checkpointChoice(options: InstallOptions): CheckpointChoice {
  if (options.checkpoint !== undefined && options.fromHub !== undefined) throw new InstallError('give --checkpoint or --from-hub, not both', 'usage');
  if (options.checkpoint !== undefined) {
    if (options.revision !== undefined) throw new InstallError('--revision is for --from-hub: a local checkpoint has none', 'usage');
    return { kind: 'checkpoint', path: options.checkpoint };
  }
  return { kind: 'hub', ...(typeof options.fromHub === 'string' && { repo: options.fromHub }), ...(options.revision && { revision: options.revision }) };
}

async function install(name: string, options: InstallOptions): Promise<number> {
  return reporting(async (config) => {
    const choice = checkpointChoice(options);
    const progress = modelProgress(process.stdout);
    // Ctrl-C stops the download or the export; the install then cleans up after itself.
    const interrupt = new AbortController();
    const onInterrupt = () => interrupt.abort();
    process.once('SIGINT', onInterrupt);
    const settings = {
      models: config.engine.models,
      hub: { endpoint: config.modelInstall.hubEndpoint, token: config.modelInstall.hubToken },
      downloadsDir: config.modelInstall.downloadsDir,
    };
    let done: InstalledModelSummary;
    try {
      done = await installModel(name, choice, settings, progress, interrupt.signal);
    } finally {
      progress.close();
      process.removeListener('SIGINT', onInterrupt);
    }
    const source = describeSource(done.source, config.modelInstall.hubEndpoint);
    process.stdout.write(`installed ${name} at ${done.folder} (${formatBytes(done.bytes)}), from ${source}\n`);
    return EXIT.ok;
  });
}

function list(command: string): Promise<number> {
  return reporting(async (config) => {
    const listed = listModels(config.engine.models, config.modelInstall.hubEndpoint, command);
    const rows = listed.map((m) => [m.name, m.state, m.bytes === null ? '-' : formatBytes(m.bytes), m.source ?? '-']);
    process.stdout.write(`models of MODELS_DIR=${config.engine.models.modelsDir}\n${table([['model', 'state', 'size', 'source'], ...rows])}\n`);
    const hints = listed.filter((m) => m.hint !== null && m.state !== 'unavailable');
    if (hints.length > 0) process.stdout.write(`\n${hints.map((m) => `${m.name}: ${m.hint}`).join('\n')}\n`);
    return EXIT.ok;
  });
}

function remove(name: string): Promise<number> {
  return reporting(async (config) => {
    const { modelsDir } = config.engine.models;
    if (removeModel(name, modelsDir)) {
      process.stdout.write(`removed ${name} from ${modelsDir}\n`);
      return EXIT.ok;
    }
    process.stdout.write(`${name} is not installed in ${modelsDir}: nothing to remove\n`);
    return EXIT.failed;
  });
}

/** Adds `install`, `list` and `remove` to `parent`; `command` is how users call it, for the commands `list` prints. */
export function modelCommands(parent: Command, command: string): void {
  parent
    .command('install')
    .description(
      'install a foundation model: its reference checkpoint (from the Hugging Face Hub by default), exported, checked against the reference, warmed up',
    )
    .argument('<name>', 'the model name, such as chronos-2 (`list` shows them)')
    .option('--checkpoint <dir>', 'export a local checkpoint folder (or file) instead of downloading one')
    .option(
      '--from-hub [repo]',
      "download the checkpoint from the Hub (HF_ENDPOINT, HF_TOKEN), the default; repo: another repository than the model's reference",
    )
    .option('--revision <revision>', 'with --from-hub: the branch, tag or commit (default main)')
    .action(async (name: string, options: InstallOptions) => {
      process.exitCode = await install(name, options);
    });
  parent
    .command('list')
    .description('every model with its state (built in, installed and verified, not installed, broken), size and source')
    .action(async () => {
      process.exitCode = await list(command);
    });
  parent
    .command('remove')
    .description("delete an installed model's folder from MODELS_DIR")
    .argument('<name>')
    .action(async (name: string) => {
      process.exitCode = await remove(name);
    });
}

/** `forecast models install|list|remove`: on the server's host. */
export function modelsCommands(program: Command): void {
  const models = program.command('models').description("install, list and remove foundation models in this host's MODELS_DIR (run it on the server's host)");
  modelCommands(models, 'forecast models');
}
