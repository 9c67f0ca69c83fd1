/** `forecast ...` (npm run forecast -- ..., npx forecast ...): the command line of the job API (bin/cli/). */
import { loadClientConfig } from '../config.ts';
import { EXIT } from './cli/errors.ts';
import { runCli } from './cli/program.ts';

let config;
try {
  config = loadClientConfig();
} catch (error) {
  // A malformed setting (PORT=abc) is a usage error, said in one line like the command's own.
  process.stderr.write(`error: ${(error as Error).message}\n`);
  process.exit(EXIT.usage);
}
process.exitCode = await runCli(process.argv, config);
