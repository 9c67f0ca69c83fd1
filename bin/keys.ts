/**
 * `npm run keys -- create <principal> | list | revoke <id-or-prefix>` (also `forecast keys ...`, bin/cli/keys.ts):
 * the keys of the job store STORAGE_URL names (default: the folder DATA_DIR), shared by every replica.
 */
import { loadConfig } from '../config.ts';
import { createKeyCommand, listKeysCommand, revokeKeyCommand } from './cli/keys.ts';

const USAGE = 'usage: npm run keys -- create <principal> | list | revoke <key-id-or-prefix>';

async function main(args: string[]): Promise<number> {
  const config = () => loadConfig();
  const [command, arg] = args;
  if (command === 'create' && arg) return createKeyCommand(config, arg);
  if (command === 'list') return listKeysCommand(config);
  if (command === 'revoke' && arg) return revokeKeyCommand(config, arg);
  console.error(USAGE);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
