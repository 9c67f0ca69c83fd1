import { Command, CommanderError } from 'commander';
import type { ClientConfig } from '../../config.ts';
import { downloadCommand } from './download.ts';
import { CliError, EXIT } from './errors.ts';
import { jobCommands } from './jobs.ts';
import { keysCommands } from './keys.ts';
import { modelsCommands } from './models.ts';
import { scheduleCommands } from './schedules.ts';
import { submitCommand } from './submit.ts';

/** The `forecast` command line (docs/dashboard-and-cli.md, "Command line"): jobs over the stable API, scheduled beta backtests, API keys, and the host's foundation models. */
export function buildProgram(config: ClientConfig): Command {
  const program = new Command('forecast')
    .description('Submit long-format files (unique_id, ds, y) as forecast jobs, follow them and download their results; schedule beta backtests.')
    // The key's value is never shown as a default: --help output ends up in logs and screenshots.
    .option('--url <url>', `the service's base URL (default: FORECAST_URL, else ${config.baseUrl})`)
    .option('--api-key <key>', 'API key (default: FORECAST_API_KEY)')
    .showHelpAfterError('(run with --help for usage)')
    // Subcommands inherit this: usage errors come back as exceptions, so that they exit 2.
    .exitOverride();
  submitCommand(program, config);
  jobCommands(program, config);
  downloadCommand(program, config);
  scheduleCommands(program, config);
  keysCommands(program);
  modelsCommands(program);
  return program;
}

/** Runs the command line; returns the exit code (docs/dashboard-and-cli.md: 1 the service or the job failed, 2 wrong usage or input). */
export async function runCli(argv: string[], config: ClientConfig): Promise<number> {
  try {
    await buildProgram(config).parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    // Commander has printed its own message (or the help, or the version).
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof CliError) {
      process.stderr.write(`${error.report().join('\n')}\n`);
      return error.exitCode;
    }
    throw error;
  }
}
