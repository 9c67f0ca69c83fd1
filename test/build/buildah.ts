import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * buildah for the container-image test, with the vfs storage driver and chroot isolation: they
 * need neither overlay mounts nor user namespaces. No image registry may be reachable, so the
 * base image is made here from Debian packages (debootstrap) and this machine's Node.js, and
 * kept in buildah's storage for later runs.
 */

const STORAGE = ['--storage-driver', 'vfs'];
/** Changes with what ensureBaseImage puts in the image, so that a later run makes it again. */
const BASE_RECIPE = 'r2';
const DEBIAN_MIRROR = 'http://deb.debian.org/debian';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const NODE_PREFIX = path.dirname(path.dirname(fs.realpathSync(process.execPath)));

/** Why buildah cannot build and run images here, or null when it can. */
export function buildahUnavailable(): string | null {
  const missing = ['buildah', 'debootstrap'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  if (missing.length > 0) return `${missing.join(' and ')} not installed (scripts/ensure-buildah.sh installs them as root)`;
  if (process.getuid?.() !== 0) return 'buildah with chroot isolation and vfs storage needs root here';
  return null;
}

/** Runs buildah to the end; its output goes to `log`. Rejects with the output's tail when it fails. */
export function buildah(args: string[], log: string): Promise<string> {
  return run('buildah', [...STORAGE, ...args], log);
}

function run(command: string, args: string[], log: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const out = fs.createWriteStream(log, { flags: 'a' });
    out.write(`$ ${command} ${args.join(' ')}\n`);
    child.stdout.on('data', (d: Buffer) => ((stdout += d), out.write(d)));
    child.stderr.on('data', (d: Buffer) => out.write(d));
    child.once('error', reject);
    child.once('exit', (code) => {
      out.end();
      if (code === 0) return resolve(stdout.trim());
      const tail = fs.readFileSync(log, 'utf8').split('\n').slice(-30).join('\n');
      reject(new Error(`${command} ${args.slice(0, 4).join(' ')} ... exited with ${code}:\n${tail}`));
    });
  });
}

export async function imageExists(name: string): Promise<boolean> {
  return spawnSync('buildah', [...STORAGE, 'inspect', '--type', 'image', name], { stdio: 'ignore' }).status === 0;
}

/**
 * Debian's minimal system with this machine's CA certificates, `node` and `npm`: what the
 * Containerfile needs of its base (the default, node:<version>-bookworm-slim, has the same).
 * Made once per Node.js version; later runs find it in buildah's storage.
 */
export async function ensureBaseImage(log: string): Promise<string> {
  const name = `localhost/forecasting-test-base:node-${process.versions.node}-${BASE_RECIPE}`;
  if (await imageExists(name)) return name;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'forecasting-base-'));
  try {
    await run('debootstrap', ['--variant=minbase', '--include=ca-certificates', 'bookworm', root, DEBIAN_MIRROR], log);
    // What an image needs no more of: package lists, caches, documentation.
    for (const dir of ['var/lib/apt/lists', 'var/cache/apt', 'usr/share/doc', 'usr/share/man', 'usr/share/locale']) {
      fs.rmSync(path.join(root, dir), { recursive: true, force: true });
    }
    // This machine's certificate authorities, which its package registry may need (behind a TLS proxy), for node and npm.
    fs.copyFileSync(CA_BUNDLE, path.join(root, 'etc/ssl/certs/ca-certificates.crt'));
    fs.mkdirSync(path.join(root, 'usr/local/etc'), { recursive: true });
    fs.writeFileSync(path.join(root, 'usr/local/etc/npmrc'), `cafile=${CA_BUNDLE}\n`);
    fs.copyFileSync(process.execPath, path.join(root, 'usr/local/bin/node'));
    fs.cpSync(path.join(NODE_PREFIX, 'lib/node_modules/npm'), path.join(root, 'usr/local/lib/node_modules/npm'), { recursive: true });
    fs.symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(root, 'usr/local/bin/npm'));
    fs.symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', path.join(root, 'usr/local/bin/npx'));
    const container = await buildah(['from', 'scratch'], log);
    try {
      await buildah(['copy', container, root, '/'], log);
      await buildah(['config', '--env', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', '--cmd', 'node', container], log);
      await buildah(['commit', '--rm', container, name], log);
    } catch (error) {
      await buildah(['rm', container], log).catch(() => undefined);
      throw error;
    }
    return name;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/**
 * A hash of the build context: every file git tracks or would track, less the top-level names
 * and patterns `.containerignore` lists. An image labelled with it needs no rebuild.
 */
export function contextHash(root: string): string {
  const ignored = fs
    .readFileSync(path.join(root, '.containerignore'), 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'));
  const matches = (file: string, entry: string) => (entry.startsWith('*.') ? file.endsWith(entry.slice(1)) : file === entry || file.startsWith(`${entry}/`));
  const files = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' })
    .stdout.split('\n')
    .filter((file) => file && fs.existsSync(path.join(root, file)) && !ignored.some((entry) => matches(file, entry)))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(file).update(fs.readFileSync(path.join(root, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The value of a label of an image in buildah's storage, or null. */
export function imageLabel(name: string, label: string): string | null {
  const format = `{{index .Docker.Config.Labels "${label}"}}`;
  const value = spawnSync('buildah', [...STORAGE, 'inspect', '--type', 'image', '--format', format, name], { encoding: 'utf8' }).stdout?.trim();
  return value && value !== '<no value>' ? value : null;
}
