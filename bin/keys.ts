/** `npm run keys -- create <principal> | list | revoke <id-or-prefix>` (also `forecast keys ...`, bin/cli/keys.ts). */
import { loadConfig } from '../config.ts';
import { createKeyCommand, listKeysCommand, revokeKeyCommand } from './cli/keys.ts';

const USAGE = 'usage: npm run keys -- create <principal> | list | revoke <key-id-or-prefix>';

async function main(args: string[]): Promise<number> {
  const { dataDir } = loadConfig();
  const [command, arg] = args;
  if (command === 'create' && arg) return createKeyCommand(dataDir, arg);
  if (command === 'list') return listKeysCommand(dataDir);
  if (command === 'revoke' && arg) return revokeKeyCommand(dataDir, arg);
  console.error(USAGE);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
