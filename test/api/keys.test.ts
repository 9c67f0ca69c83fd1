import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { KeyResolver } from '../../api/auth.ts';
import { createKey, listKeys, revokeKey } from '../../api/keys-store.ts';
import { dailyRequest, tempDataDir, testConfig, testServer } from './helpers.ts';

const run = promisify(execFile);

test('the keys CLI creates, lists and revokes keys stored only as hashes', async () => {
  const dataDir = tempDataDir();
  const env = { ...process.env, DATA_DIR: dataDir };
  const created = await run(process.execPath, ['--import', 'tsx', 'bin/keys.ts', 'create', 'carol'], { env });
  const key = created.stdout.trim().split('\n').pop()!;
  expect(key).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/);

  const listed = await run(process.execPath, ['--import', 'tsx', 'bin/keys.ts', 'list'], { env });
  expect(listed.stdout).toContain('carol');
  expect(listed.stdout).not.toContain(key);

  const [stored] = await listKeys(dataDir);
  const revoked = await run(process.execPath, ['--import', 'tsx', 'bin/keys.ts', 'revoke', stored.id], { env });
  expect(revoked.stdout).toContain('revoked 1');
  expect((await listKeys(dataDir))[0].revoked_at).not.toBeNull();

  const usage = await run(process.execPath, ['--import', 'tsx', 'bin/keys.ts', 'frobnicate'], { env }).catch((e) => e);
  expect(usage.code).toBe(2);
}, 60_000);

test('the server accepts a CLI-created key as its principal and refuses it once revoked', async () => {
  const config = testConfig();
  const { key } = await createKey(config.dataDir, 'dave');
  const app = await testServer(config, new KeyResolver(config, { staleMs: 0, missMs: 0 }));
  const call = () => app.inject({ method: 'POST', url: '/forecast?model=naive', headers: { authorization: `Bearer ${key}` }, payload: dailyRequest() });
  expect((await call()).statusCode).toBe(200);
  expect(await revokeKey(config.dataDir, key.slice(0, 10))).toBe(1);
  const refused = await call();
  expect(refused.statusCode).toBe(401);
  expect(refused.json().code).toBe('invalid_auth');
  await app.close();
});
