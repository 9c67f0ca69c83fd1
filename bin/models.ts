/**
 * `npm run models -- install <name> | list | remove <name>` (also `forecast models ...`): foundation
 * models in this host's MODELS_DIR (bin/cli/models.ts, models/install/).
 */
import { Command, CommanderError } from 'commander';
import { EXIT } from './cli/errors.ts';
import { modelCommands } from './cli/models.ts';

const COMMAND = 'npm run models --';

const program = new Command(COMMAND)
  .description("install, list and remove foundation models in this host's MODELS_DIR")
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();
modelCommands(program, COMMAND);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander has printed its own message (or the help).
  if (!(error instanceof CommanderError)) throw error;
  process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
