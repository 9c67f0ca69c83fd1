/**
 * The repository's export tools, run as the README runs them: scripts/ensure-onnx-reference.sh
 * makes (once, cached) the Python environment a requirements file of tools/export/ names, and
 * tools/export/export.py exports a checkpoint with it. The export checks its ONNX graph against
 * the reference forward before it writes the manifest: a graph that disagrees fails the export.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ExportRecipe } from './export-recipes.ts';
import { InstallError, interrupted } from './install-error.ts';
import type { InstallReporter } from './progress.ts';

const ENSURE_ENVIRONMENT = 'scripts/ensure-onnx-reference.sh';
const EXPORT_SCRIPT = 'tools/export/export.py';
/** Lines of a failed tool's output that its error shows. */
const LAST_LINES = 15;

/** The source checkout holding the export tools: they are not part of a production build. */
export function toolsRoot(): string {
  for (let dir = import.meta.dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, EXPORT_SCRIPT)) && fs.existsSync(path.join(dir, ENSURE_ENVIRONMENT))) return dir;
    if (path.dirname(dir) === dir) {
      throw new InstallError(`installing a model needs the repository's ${EXPORT_SCRIPT} and ${ENSURE_ENVIRONMENT}: run it from a source checkout`);
    }
  }
}

interface ToolRun {
  readonly code: number | null;
  readonly stdout: string[];
  readonly lastLines: string[];
}

/** Runs a tool, each line of its output handed to `onLine`; Ctrl-C (the signal) stops it. */
function runTool(
  command: string,
  args: readonly string[],
  cwd: string,
  signal: AbortSignal,
  onLine: (line: string, stream: 'stdout' | 'stderr') => void,
): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], signal });
    const stdout: string[] = [];
    const lastLines: string[] = [];
    const collect = (stream: 'stdout' | 'stderr') => {
      let pending = '';
      return (chunk: Buffer) => {
        const lines = (pending + chunk.toString('utf8')).split(/\r?\n|\r/);
        pending = lines.pop() ?? '';
        for (const line of lines.filter((l) => l.trim() !== '')) {
          if (stream === 'stdout') stdout.push(line);
          lastLines.push(line);
          if (lastLines.length > LAST_LINES) lastLines.shift();
          onLine(line, stream);
        }
      };
    };
    child.stdout.on('data', collect('stdout'));
    child.stderr.on('data', collect('stderr'));
    child.on('error', (error) => reject(signal.aborted ? interrupted() : error));
    child.on('close', (code) => (signal.aborted ? reject(interrupted()) : resolve({ code, stdout, lastLines })));
  });
}

const elapsed = (since: number) => {
  const s = Math.round((Date.now() - since) / 1000);
  return s < 90 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
};

/** The python of the recipe's export environment, set up on first use (torch and the reference package: minutes). */
export async function exportEnvironment(root: string, recipe: ExportRecipe, reporter: InstallReporter, signal: AbortSignal): Promise<string> {
  const stage = reporter.stage(`export environment (tools/export/${recipe.requirements})`);
  const started = Date.now();
  let installing = false;
  const args = [ENSURE_ENVIRONMENT, recipe.requirements, ...(recipe.python ? [recipe.python] : [])];
  const run = await runTool('bash', args, root, signal, (line, stream) => {
    if (stream !== 'stderr') return;
    installing ||= line.startsWith('Installing');
    reporter.note(line);
  }).catch((error) => {
    stage.end(null);
    throw error;
  });
  const python = run.stdout.at(-1);
  if (run.code !== 0 || !python || !fs.existsSync(python)) {
    stage.end(null);
    throw new InstallError(
      `the export environment of tools/export/${recipe.requirements} could not be set up (${ENSURE_ENVIRONMENT} exited with ${run.code})`,
      'failed',
      run.lastLines,
    );
  }
  stage.end(installing ? `installed in ${elapsed(started)}` : 'ready (cached)');
  return python;
}

export interface ExportRun {
  readonly name: string;
  /** What export.py's `--checkpoint` gets: a folder, or a file of it. */
  readonly checkpoint: string;
  /** The model directory the export writes `<name>/` into. */
  readonly out: string;
  /** Written to the manifest's `version` and `source`; absent: export.py's defaults. */
  readonly version?: string;
  readonly source?: string;
}

/** Exports the checkpoint; the export's own check of the graph against the reference forward is its verification. */
export async function runExport(
  root: string,
  python: string,
  recipe: ExportRecipe,
  job: ExportRun,
  reporter: InstallReporter,
  signal: AbortSignal,
): Promise<void> {
  const stage = reporter.stage('export, checked against the reference');
  const started = Date.now();
  const args = [
    EXPORT_SCRIPT,
    job.name,
    '--checkpoint',
    job.checkpoint,
    '--out',
    job.out,
    ...(job.version ? ['--version', job.version] : []),
    ...(job.source ? ['--source', job.source] : []),
    ...recipe.exportArgs,
  ];
  // Its stdout says what it did (the export, the check's error, the manifest); stderr holds library warnings, shown on failure.
  const run = await runTool(python, args, root, signal, (line, stream) => stream === 'stdout' && reporter.note(line)).catch((error) => {
    stage.end(null);
    throw error;
  });
  if (run.code !== 0) {
    stage.end(null);
    throw new InstallError(`the export of ${job.name} failed (${EXPORT_SCRIPT} exited with ${run.code}); nothing was installed`, 'failed', run.lastLines);
  }
  stage.end(`done in ${elapsed(started)}`);
}
