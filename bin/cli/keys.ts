import path from 'node:path';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config.ts';
import type { ApiKeys } from '../../store/api-keys.ts';
import type { JobStore } from '../../store/job-store.ts';
import { EXIT } from './errors.ts';

/**
 * API keys in the job store (store/api-keys.ts), for `forecast keys ...` and `npm run keys -- ...`
 * alike. They act on the store STORAGE_URL names (default: the folder DATA_DIR), as the service
 * does, not over HTTP: whoever can write the store manages its keys, for every replica at once.
 */

/**
 * Runs `work` on the keys of the job store the configuration names, after importing the keys of
 * an old `DATA_DIR/keys.duckdb`. A store that cannot be used is one line, `Cannot <what>: <why>`.
 */
async function onKeyStore(what: string, config: () => Config, work: (keys: ApiKeys) => Promise<number>): Promise<number> {
  let store: JobStore | undefined;
  try {
    const { storage, dataDir } = config();
    // Loaded here, not with the CLI: the store's SDKs would slow down every other `forecast` command.
    const [{ JobStore }, { importLegacyKeys, legacyKeysFile }] = await Promise.all([import('../../store/job-store.ts'), import('../../store/legacy-keys.ts')]);
    store = JobStore.open(storage);
    await store.check();
    const imported = await importLegacyKeys(dataDir, store.apiKeys);
    if (imported > 0) process.stderr.write(`imported ${imported} key(s) from ${legacyKeysFile(dataDir)} into the job store ${store.url}\n`);
    return await work(store.apiKeys);
  } catch (error) {
    process.stderr.write(`Cannot ${what}: ${(error as Error).message}\n`);
    return EXIT.failed;
  } finally {
    store?.close();
  }
}

export function createKeyCommand(config: () => Config, principal: string): Promise<number> {
  return onKeyStore('create a key', config, async (keys) => {
    const { id, key } = await keys.create(principal);
    process.stdout.write(`created key ${id} for principal '${principal}'. Store it now; it is not shown again:\n${key}\n`);
    return EXIT.ok;
  });
}

export function listKeysCommand(config: () => Config): Promise<number> {
  return onKeyStore('list the keys', config, async (keys) => {
    const listed = await keys.list();
    if (listed.length === 0) process.stdout.write('no keys\n');
    for (const k of listed) {
      process.stdout.write(`${[k.id, k.principal, `${k.prefix}...`, k.created_at, k.revoked_at ? `revoked ${k.revoked_at}` : 'active'].join('\t')}\n`);
    }
    return EXIT.ok;
  });
}

export function revokeKeyCommand(config: () => Config, idOrPrefix: string): Promise<number> {
  return onKeyStore('revoke a key', config, async (keys) => {
    const count = await keys.revoke(idOrPrefix);
    process.stdout.write(count > 0 ? `revoked ${count} key(s)\n` : `no active key matches '${idOrPrefix}'\n`);
    return count > 0 ? EXIT.ok : EXIT.failed;
  });
}

/**
 * The configuration with another DATA_DIR (`--data-dir`): the default store, `file://DATA_DIR`,
 * follows it; a STORAGE_URL naming another place stays.
 */
function withDataDir(config: Config, dataDir: string): Config {
  const dir = path.resolve(dataDir);
  const defaultStore = config.storage.url === `file://${config.dataDir}`;
  return { ...config, dataDir: dir, storage: defaultStore ? { ...config.storage, url: `file://${dir}` } : config.storage };
}

/** `forecast keys create|list|revoke`. */
export function keysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description('manage the API keys of a service: they live in its job store (STORAGE_URL, default the folder DATA_DIR), shared by every replica')
    .option('--data-dir <dir>', "the service's DATA_DIR, where its default job store is (default: DATA_DIR, else ./data)");
  const config = (self: Command) => () => {
    const dataDir = self.optsWithGlobals<{ dataDir?: string }>().dataDir;
    return dataDir ? withDataDir(loadConfig(), dataDir) : loadConfig();
  };
  keys
    .command('create')
    .description('create a key for a principal; it is printed once')
    .argument('<principal>', 'who the key belongs to (jobs and rate limits are per principal)')
    .action(async (principal: string, _options: unknown, self: Command) => {
      process.exitCode = await createKeyCommand(config(self), principal);
    });
  keys
    .command('list')
    .description('id, principal, key prefix, created, revoked')
    .action(async (_options: unknown, self: Command) => {
      process.exitCode = await listKeysCommand(config(self));
    });
  keys
    .command('revoke')
    .description('revoke a key by its id or listed prefix (every replica of the service refuses it within 5 s)')
    .argument('<key-id-or-prefix>')
    .action(async (idOrPrefix: string, _options: unknown, self: Command) => {
      process.exitCode = await revokeKeyCommand(config(self), idOrPrefix);
    });
}
