import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';
import { KeyResolver } from '../../api/auth.ts';
import type { Environment } from '../../config.ts';
import { hashKey } from '../../store/api-keys.ts';
import { JobStore } from '../../store/job-store.ts';
import { importLegacyKeys } from '../../store/legacy-keys.ts';
import { writeLegacyKeys } from '../store/legacy-keys.ts';
import { dailyRequest, tempDataDir, testConfig, testServer } from './helpers.ts';

/**
 * API keys made with the key CLI live in the job store (store/api-keys.ts): the CLI makes, lists
 * and revokes them there, a server reading the store accepts them and refuses them once revoked,
 * and the keys of an old `DATA_DIR/keys.duckdb` are imported once, revocations included.
 */

const run = promisify(execFile);
/** A key of the form the CLI makes, that no store holds. */
const unknownKey = () => `fsk_${randomBytes(32).toString('base64url')}`;
const keysCli = (args: string[], env: Environment) => run(process.execPath, ['--import', 'tsx', 'bin/keys.ts', ...args], { env: { ...process.env, ...env } });
/** A reader that reloads the store's keys at every request: what a replica sees once its refresh has run. */
const eagerResolver = (store: JobStore, envKeys = testConfig().envKeys) =>
  new KeyResolver(store.apiKeys, envKeys, { intervalMs: 60_000, staleMs: 0, requestMs: 0 });

test('the keys CLI creates, lists and revokes keys in the job store, stored only as hashes', async () => {
  const dataDir = tempDataDir();
  const env = { DATA_DIR: dataDir, STORAGE_URL: '' };
  const created = await keysCli(['create', 'carol'], env);
  const key = created.stdout.trim().split('\n').pop()!;
  expect(key).toMatch(/^fsk_[A-Za-z0-9_-]{43}$/);

  // One immutable record per key under api-keys/keys/ of the default store (the folder DATA_DIR): no clear key.
  const [file] = fs.readdirSync(path.join(dataDir, 'api-keys', 'keys'));
  const record = JSON.parse(fs.readFileSync(path.join(dataDir, 'api-keys', 'keys', file), 'utf8'));
  expect(record).toEqual({
    id: file.replace('.json', ''),
    principal: 'carol',
    key_hash: hashKey(key),
    prefix: key.slice(0, 10),
    created_at: expect.any(String),
  });
  expect(fs.readFileSync(path.join(dataDir, 'api-keys', 'keys', file), 'utf8')).not.toContain(key);
  expect(fs.existsSync(path.join(dataDir, 'keys.duckdb'))).toBe(false);

  const listed = await keysCli(['list'], env);
  expect(listed.stdout).toBe(`${record.id}\tcarol\t${key.slice(0, 10)}...\t${record.created_at}\tactive\n`);

  const revoked = await keysCli(['revoke', record.id], env);
  expect(revoked.stdout).toBe('revoked 1 key(s)\n');
  const store = JobStore.local(dataDir);
  const [stored] = await store.apiKeys.list();
  expect(stored.revoked_at).toEqual(expect.any(String));
  // Revoking again changes nothing: the first revocation stands.
  const again = await keysCli(['revoke', key.slice(0, 10)], env).catch((e) => e);
  expect(again.code).toBe(1);
  expect(again.stdout).toBe(`no active key matches '${key.slice(0, 10)}'\n`);
  expect((await store.apiKeys.list())[0].revoked_at).toBe(stored.revoked_at);
  store.close();

  const usage = await keysCli(['frobnicate'], env).catch((e) => e);
  expect(usage.code).toBe(2);
}, 60_000);

test('the keys CLI on a store it cannot use says so in one line and exits 1', async () => {
  const failed = await keysCli(['create', 'carol'], { DATA_DIR: tempDataDir(), STORAGE_URL: 'file:///dev/null/store' }).catch((e) => e);
  expect(failed.code).toBe(1);
  expect(failed.stdout).toBe('');
  expect(failed.stderr).toMatch(/^Cannot create a key: the job store file:\/\/\/dev\/null\/store cannot be written: .*\n$/);
}, 30_000);

test('a server accepts a key made on another replica as its principal and refuses it once revoked there', async () => {
  const config = testConfig();
  const [mine, other] = [JobStore.local(config.dataDir), JobStore.local(config.dataDir)];
  const { key } = await other.apiKeys.create('dave');
  const app = await testServer(config, eagerResolver(mine));
  const call = () => app.inject({ method: 'POST', url: '/forecast?model=naive', headers: { authorization: `Bearer ${key}` }, payload: dailyRequest() });
  expect((await call()).statusCode).toBe(200);
  expect(await other.apiKeys.revoke(key.slice(0, 10))).toBe(1);
  const refused = await call();
  expect(refused.statusCode).toBe(401);
  expect(refused.json().code).toBe('invalid_auth');
  await app.close();
  mine.close();
  other.close();
});

test('unknown keys reload the store at most once a second, a key made meanwhile still works at once, other forms never reload', async () => {
  const store = JobStore.local(tempDataDir());
  let loads = 0;
  const source = { activeHashes: () => (loads++, store.apiKeys.activeHashes()) };
  const resolver = new KeyResolver(source, [], { intervalMs: 60_000, staleMs: 60_000, requestMs: 1_000 });
  expect(await resolver.resolve(unknownKey())).toBeUndefined();
  expect(loads).toBe(1);
  // Made right after that reload: the next request waits for the next one, which the others share.
  const { key } = await store.apiKeys.create('frank');
  const started = Date.now();
  const answers = await Promise.all([resolver.resolve(key), resolver.resolve(unknownKey()), resolver.resolve(unknownKey())]);
  expect(answers).toEqual(['frank', undefined, undefined]);
  expect(loads).toBe(2);
  expect(Date.now() - started).toBeGreaterThan(800);
  expect(await resolver.resolve(key)).toBe('frank');
  // A key of another form cannot be in the store: refused at once, without a reload.
  const quick = Date.now();
  expect(await resolver.resolve('wrong-key')).toBeUndefined();
  expect(await resolver.resolve(`${key}x`)).toBeUndefined();
  expect(Date.now() - quick).toBeLessThan(100);
  expect(loads).toBe(2);
  store.close();
});

test('a reader that cannot reach the store keeps the last keys it read', async () => {
  const store = JobStore.local(tempDataDir());
  const { key } = await store.apiKeys.create('erin');
  let away = false;
  const source = { activeHashes: () => (away ? Promise.reject(new Error('the store is away')) : store.apiKeys.activeHashes()) };
  const warnings: string[] = [];
  const resolver = new KeyResolver(source, [], { intervalMs: 60_000, staleMs: 0, requestMs: 0 });
  resolver.start((message) => warnings.push(message));
  expect(await resolver.resolve(key)).toBe('erin');
  away = true;
  expect(await resolver.resolve(key)).toBe('erin');
  expect(await resolver.resolve(key)).toBe('erin');
  expect(await resolver.resolve(unknownKey())).toBeUndefined();
  // One warning for the outage, not one per reload.
  expect(warnings).toEqual(['the API keys could not be read from the job store; the last keys read stay in use: the store is away']);
  resolver.stop();
  store.close();
});

test('the keys of an old keys.duckdb are imported once: they work, revoked ones stay revoked, importing again changes nothing', async () => {
  const config = testConfig();
  const [alice, bob, carol] = await writeLegacyKeys(config.dataDir, [
    { principal: 'alice', revoked: false },
    { principal: 'bob', revoked: true },
    { principal: 'carol', revoked: false },
  ]);

  // The key CLI imports them before it lists, and says so (on stderr: stdout stays the listing).
  const listed = await keysCli(['list'], { DATA_DIR: config.dataDir, STORAGE_URL: '' });
  expect(listed.stderr).toBe(`imported 3 key(s) from ${path.join(config.dataDir, 'keys.duckdb')} into the job store file://${config.dataDir}\n`);
  expect(listed.stdout).toBe(
    [
      `${alice.id}\talice\t${alice.key.slice(0, 10)}...\t2024-03-01T10:00:00.250Z\tactive`,
      `${bob.id}\tbob\t${bob.key.slice(0, 10)}...\t2024-03-02T10:00:00.250Z\trevoked 2024-04-01T12:00:00.000Z`,
      `${carol.id}\tcarol\t${carol.key.slice(0, 10)}...\t2024-03-03T10:00:00.250Z\tactive`,
      '',
    ].join('\n'),
  );
  expect(fs.existsSync(path.join(config.dataDir, 'keys.duckdb'))).toBe(true);

  const store = JobStore.local(config.dataDir);
  const app = await testServer(config, eagerResolver(store, []));
  const status = async (key: string) =>
    (await app.inject({ method: 'POST', url: '/forecast?model=naive', headers: { authorization: `Bearer ${key}` }, payload: dailyRequest() })).statusCode;
  expect(await status(alice.key)).toBe(200);
  expect(await status(bob.key)).toBe(401);
  expect(await status(carol.key)).toBe(200);

  // Revoked in the store, carol stays revoked although the file still says active.
  expect(await store.apiKeys.revoke(carol.id)).toBe(1);
  const before = await store.apiKeys.list();
  const files = () => fs.readdirSync(path.join(config.dataDir, 'api-keys'), { recursive: true }).sort();
  const objects = files();
  expect(await importLegacyKeys(config.dataDir, store.apiKeys)).toBe(0);
  const again = await keysCli(['list'], { DATA_DIR: config.dataDir, STORAGE_URL: '' });
  expect(again.stderr).toBe('');
  expect(await store.apiKeys.list()).toEqual(before);
  expect(files()).toEqual(objects);
  expect(await status(alice.key)).toBe(200);
  expect(await status(bob.key)).toBe(401);
  expect(await status(carol.key)).toBe(401);
  await app.close();
  store.close();
}, 60_000);
