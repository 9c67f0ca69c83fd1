import type { Command } from 'commander';
import { createKey, listKeys, revokeKey } from '../../api/keys-store.ts';
import { loadConfig } from '../../config.ts';
import { EXIT } from './errors.ts';

/**
 * API keys in DATA_DIR/keys.duckdb (api/keys-store.ts), for `forecast keys ...` and
 * `npm run keys -- ...` alike. They act on the files of a service on this machine, not over HTTP:
 * whoever can write its DATA_DIR manages its keys.
 */

export async function createKeyCommand(dataDir: string, principal: string): Promise<number> {
  const { id, key } = await createKey(dataDir, principal);
  process.stdout.write(`created key ${id} for principal '${principal}'. Store it now; it is not shown again:\n${key}\n`);
  return EXIT.ok;
}

export async function listKeysCommand(dataDir: string): Promise<number> {
  const keys = await listKeys(dataDir);
  if (keys.length === 0) process.stdout.write('no keys\n');
  for (const k of keys) {
    process.stdout.write(`${[k.id, k.principal, `${k.prefix}...`, k.created_at, k.revoked_at ? `revoked ${k.revoked_at}` : 'active'].join('\t')}\n`);
  }
  return EXIT.ok;
}

export async function revokeKeyCommand(dataDir: string, idOrPrefix: string): Promise<number> {
  const count = await revokeKey(dataDir, idOrPrefix);
  process.stdout.write(count > 0 ? `revoked ${count} key(s)\n` : `no active key matches '${idOrPrefix}'\n`);
  return count > 0 ? EXIT.ok : EXIT.failed;
}

/** `forecast keys create|list|revoke`. */
export function keysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description("manage the API keys of a service on this machine (its DATA_DIR's keys.duckdb)")
    .option('--data-dir <dir>', "the service's DATA_DIR (default: DATA_DIR, else ./data)");
  const dataDir = (self: Command) => self.optsWithGlobals<{ dataDir?: string }>().dataDir ?? loadConfig().dataDir;
  keys
    .command('create')
    .description('create a key for a principal; it is printed once')
    .argument('<principal>', 'who the key belongs to (jobs and rate limits are per principal)')
    .action(async (principal: string, _options: unknown, self: Command) => {
      process.exitCode = await createKeyCommand(dataDir(self), principal);
    });
  keys
    .command('list')
    .description('id, principal, key prefix, created, revoked')
    .action(async (_options: unknown, self: Command) => {
      process.exitCode = await listKeysCommand(dataDir(self));
    });
  keys
    .command('revoke')
    .description('revoke a key by its id or listed prefix (the service refuses it within 5 s)')
    .argument('<key-id-or-prefix>')
    .action(async (idOrPrefix: string, _options: unknown, self: Command) => {
      process.exitCode = await revokeKeyCommand(dataDir(self), idOrPrefix);
    });
}
