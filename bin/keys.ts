/** `npm run keys -- create <principal> | list | revoke <id-or-prefix>` */
import { loadConfig } from '../config.ts';
import { createKey, listKeys, revokeKey } from '../api/keys-store.ts';

const USAGE = 'usage: npm run keys -- create <principal> | list | revoke <key-id-or-prefix>';

async function main(args: string[]): Promise<number> {
  const { dataDir } = loadConfig();
  const [command, arg] = args;
  if (command === 'create' && arg) {
    const { id, key } = await createKey(dataDir, arg);
    console.log(`created key ${id} for principal '${arg}'. Store it now; it is not shown again:\n${key}`);
    return 0;
  }
  if (command === 'list') {
    const keys = await listKeys(dataDir);
    if (keys.length === 0) console.log('no keys');
    for (const k of keys) console.log([k.id, k.principal, `${k.prefix}...`, k.created_at, k.revoked_at ? `revoked ${k.revoked_at}` : 'active'].join('\t'));
    return 0;
  }
  if (command === 'revoke' && arg) {
    const count = await revokeKey(dataDir, arg);
    console.log(count > 0 ? `revoked ${count} key(s)` : `no active key matches '${arg}'`);
    return count > 0 ? 0 : 1;
  }
  console.error(USAGE);
  return 2;
}

process.exitCode = await main(process.argv.slice(2));
