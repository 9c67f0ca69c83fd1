/** `forecast ...` (npm run forecast -- ..., npx forecast ...): the command line of the job API (bin/cli/). */
import { loadClientConfig } from '../config.ts';
import { runCli } from './cli/program.ts';

process.exitCode = await runCli(process.argv, loadClientConfig());
