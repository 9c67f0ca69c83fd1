import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

/** The dashboard's sources: a front-end of its own, which talks to the API over HTTP only. */
export const WEB_ROOT = fileURLToPath(new URL('../../web', import.meta.url));

const BUILD_OPTIONS: esbuild.BuildOptions = {
  entryPoints: [path.join(WEB_ROOT, 'src/main.tsx')],
  bundle: true,
  format: 'esm',
  minify: true,
  sourcemap: 'linked',
  // Browsers of the last few years: the ones the browser tests and users run.
  target: ['chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'silent',
};

/** Builds of this process, by DATA_DIR. */
const builds = new Map<string, Promise<string>>();

/**
 * The dashboard's static files (index.html, main.js, main.css and their source maps), bundled
 * from web/ by esbuild at a start from the sources, so that a fresh clone needs no build step and
 * nothing built is checked in (`npm run build` bundles them beforehand instead). They go to
 * `DATA_DIR/dashboard/<version>`, where the version is a hash of the sources and the bundled
 * packages: a folder is written once (built aside, then renamed, so processes sharing DATA_DIR
 * never see half a build) and reused by every later start.
 */
export function buildDashboard(dataDir: string): Promise<string> {
  const key = path.resolve(dataDir);
  let built = builds.get(key);
  if (!built) {
    built = buildInto(key).catch((error: Error) => {
      builds.delete(key);
      throw new Error(`the dashboard (web/) could not be built into ${key}: ${error.message}`);
    });
    builds.set(key, built);
  }
  return built;
}

async function buildInto(dataDir: string): Promise<string> {
  const parent = path.join(dataDir, 'dashboard');
  const target = path.join(parent, await sourceVersion());
  const complete = () =>
    fs.promises.access(path.join(target, 'index.html')).then(
      () => true,
      () => false,
    );
  if (await complete()) return target;
  await fs.promises.mkdir(parent, { recursive: true });
  const staging = await fs.promises.mkdtemp(path.join(parent, '.building-'));
  try {
    await bundleDashboard(staging);
    // Another process may have finished the same version first: its folder is as good as ours.
    await fs.promises.rename(staging, target).catch(async (error: Error) => {
      if (!(await complete())) throw error;
    });
  } finally {
    await fs.promises.rm(staging, { recursive: true, force: true });
  }
  return target;
}

/** Bundles web/ into `outdir`: index.html, main.js, main.css and their source maps. `npm run build` calls it too. */
export async function bundleDashboard(outdir: string): Promise<void> {
  await esbuild.build({ ...BUILD_OPTIONS, outdir });
  await fs.promises.copyFile(path.join(WEB_ROOT, 'index.html'), path.join(outdir, 'index.html'));
}

/** A hash of everything the bundle is made of: web/'s files, the bundler's and the bundled packages' versions, the options. */
async function sourceVersion(): Promise<string> {
  const hash = createHash('sha256').update(JSON.stringify(BUILD_OPTIONS)).update(esbuild.version);
  for (const name of ['preact', 'uplot']) hash.update(await fs.promises.readFile(fileURLToPath(import.meta.resolve(`${name}/package.json`))));
  // Paths relative to web/, in a fixed order (readdir's order depends on the file system).
  const files = (await fs.promises.readdir(WEB_ROOT, { recursive: true })).sort();
  for (const file of files) {
    const full = path.join(WEB_ROOT, file);
    if ((await fs.promises.stat(full)).isFile()) hash.update(file).update(await fs.promises.readFile(full));
  }
  return hash.digest('hex').slice(0, 16);
}
