/**
 * `npm run build`: the production build, in dist/. tsc compiles the service to JavaScript
 * (tsconfig.build.json); the files its modules read or start beside them are copied; esbuild
 * bundles the dashboard into dist/web; Temporal's bundler packs the workflows for the worker.
 * `npm run start:prod` and `npm run worker:prod` run it without TypeScript, a bundler or any
 * development package. The build is made aside and swapped in whole, so a failed one leaves the
 * last one in place.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { JOB_WORKFLOW_BUNDLE, JOB_WORKFLOW_SOURCE } from '../activities/job-worker.ts';
import { bundleDashboard } from '../api/dashboard/build.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'dist');
const CONFIG = 'tsconfig.build.json';
/** Files the compiled modules read or start from their own folder: thread entry points, calendars, rates. */
const RUNTIME_FILES = /\.(mjs|csv|csv\.gz)$/;

/** The folders and files tsc compiles; their runtime files are copied beside the output. */
function compiledSources(): string[] {
  return JSON.parse(fs.readFileSync(path.join(ROOT, CONFIG), 'utf8')).include;
}

function copyRuntimeFiles(staging: string): number {
  let copied = 0;
  for (const source of compiledSources()) {
    // bin/'s own .mjs is the development `forecast` command: the build compiles the entry points instead.
    if (source === 'bin' || !fs.statSync(path.join(ROOT, source)).isDirectory()) continue;
    for (const file of fs.readdirSync(path.join(ROOT, source), { recursive: true, encoding: 'utf8' })) {
      if (!RUNTIME_FILES.test(file)) continue;
      fs.mkdirSync(path.dirname(path.join(staging, source, file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, source, file), path.join(staging, source, file));
      copied++;
    }
  }
  return copied;
}

async function build(): Promise<void> {
  const started = Date.now();
  const staging = `${OUT}.building`;
  fs.rmSync(staging, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', CONFIG, '--outDir', staging], { cwd: ROOT, stdio: 'inherit' });
  const copied = copyRuntimeFiles(staging);
  await bundleDashboard(path.join(staging, 'web'));
  const { code } = await bundleWorkflowCode({ workflowsPath: JOB_WORKFLOW_SOURCE, logger: new DefaultLogger('WARN') });
  fs.mkdirSync(path.dirname(path.join(staging, JOB_WORKFLOW_BUNDLE)), { recursive: true });
  fs.writeFileSync(path.join(staging, JOB_WORKFLOW_BUNDLE), code);
  fs.rmSync(OUT, { recursive: true, force: true });
  fs.renameSync(staging, OUT);
  console.error(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s: the service, ${copied} runtime files, the dashboard, the workflow bundle`);
}

build().catch((error: unknown) => {
  console.error(`npm run build failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
