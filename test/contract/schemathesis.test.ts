import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KEY, startContractServer, type ContractServer } from './contract-server.ts';

/**
 * The contract in CI: schemathesis, generating requests from GET /openapi alone, runs every check
 * (server errors, status codes, content types, headers, response schemas, schema-valid data
 * accepted, schema-invalid data refused, undeclared methods, authentication, resources after
 * creation and deletion) in every phase (the document's examples, boundary coverage, fuzzing,
 * stateful chains) on every operation, against the real service with jobs, and must find nothing.
 * Settings: test/contract/schemathesis.toml (fixed seed, bounded examples); the hooks narrowing
 * one check for rules JSON Schema cannot state: test/contract/schemathesis_hooks.py.
 */

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, '../..');

/** The pinned schemathesis (scripts/ensure-schemathesis.sh, run by `npm test` first), or why there is none. */
function findSchemathesis(): { bin: string } | { missing: string } {
  const found = spawnSync('bash', [path.join(root, 'scripts/ensure-schemathesis.sh')], { encoding: 'utf8' });
  if (found.status === 0) return { bin: found.stdout.trim() };
  return { missing: found.stderr.trim().split('\n').at(-1) || `scripts/ensure-schemathesis.sh exited with ${found.status}` };
}

/** Runs a command to its end without blocking the event loop (the server under test lives in this process). */
function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

const schemathesis = findSchemathesis();
// The reason is in the suite's name, so that every reporter shows why it was skipped.
const suite = 'missing' in schemathesis ? `schemathesis against /openapi (skipped: ${schemathesis.missing})` : 'schemathesis against /openapi';

describe.skipIf('missing' in schemathesis)(suite, () => {
  let server: ContractServer;
  beforeAll(async () => {
    server = await startContractServer('contract-schemathesis');
  }, 120_000);
  afterAll(() => server?.stop());

  test('finds no failure on any operation, in any phase', { timeout: 600_000 }, async () => {
    const documented = Object.values((await (await fetch(`${server.url}/openapi`)).json()).paths as Record<string, object>).reduce(
      (count: number, methods) => count + Object.keys(methods).length,
      0,
    );
    // Schemathesis leaves out the one operation serving the document it reads (GET /openapi),
    // which test/api/openapi.test.ts validates as an OpenAPI 3.1 document.
    const operations = documented - 1;
    // A working directory of its own: hypothesis keeps files in ./.hypothesis.
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'schemathesis-'));
    const { code, output } = await run(
      (schemathesis as { bin: string }).bin,
      ['--config-file', path.join(here, 'schemathesis.toml'), '--no-color', 'run', '--checks', 'all', `${server.url}/openapi`],
      { cwd, env: { ...process.env, FORECAST_API_KEY: KEY, SCHEMATHESIS_HOOKS: path.join(here, 'schemathesis_hooks.py') } },
    );
    fs.rmSync(cwd, { recursive: true, force: true });
    // The whole report when it fails: each failure with its curl command to reproduce it.
    expect(code, output).toBe(0);
    // It ran: every operation of the document selected and tested, every phase passed.
    expect(output).toContain(`Selected: ${operations}/${operations}`);
    expect(output).toContain(`Tested: ${operations}`);
    for (const phase of ['Examples', 'Coverage', 'Fuzzing', 'Stateful']) expect(output, output).toMatch(new RegExp(`✅ ${phase}\\n`));
  });
});
