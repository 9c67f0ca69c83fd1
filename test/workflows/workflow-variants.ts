import fs from 'node:fs';
import path from 'node:path';

/**
 * Edited copies of today's job workflow, for the tests of upgrades: the same reorder of its
 * commands shipped as is, and shipped behind `patched()`. Each edit fails loudly when the
 * workflow no longer has the lines it moves, so the demonstration never silently stops
 * reordering anything.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The job workflow alone: a variant replaces it, and replays the job histories without the other workflows. */
const JOB_WORKFLOW = path.join(ROOT, 'workflows/forecast-job.ts');
/** The summary's call, which the reorder moves ahead of the chunks. */
const SUMMARY = /return await (summarizeJob\([^;]*\));/;
/** Where the chunks start: the lanes, all awaited at once. */
const CHUNKS = 'await Promise.all(Array.from(';
const WORKFLOW_IMPORT = /import \{([^}]*)\} from '@temporalio\/workflow';/;
/** The patch's id: it is recorded in the history of every job that takes the new path. */
export const REORDER_PATCH = 'summary-before-chunks';

function edit(source: string, pattern: RegExp | string, replace: (match: readonly string[]) => string): string {
  const match = typeof pattern === 'string' ? (source.includes(pattern) ? [pattern] : null) : source.match(pattern);
  if (!match) throw new Error(`the job workflow has no ${pattern}: update test/workflows/workflow-variants.ts to reorder its commands again`);
  return source.replace(pattern, () => replace(match));
}

/**
 * The job's summary asked for before its chunks run instead of after: the same commands in
 * another order. With `patchId`, jobs whose history lacks the patch keep the old order.
 */
export function summaryBeforeChunks(source: string, patchId?: string): string {
  const call = source.match(SUMMARY)?.[1];
  let edited = edit(source, SUMMARY, () => (patchId ? `return summary ?? (await ${call});` : 'return summary;'));
  const early = patchId ? `patched('${patchId}') ? await ${call} : undefined` : `await ${call}`;
  edited = edit(edited, CHUNKS, () => `const summary = ${early};\n    ${CHUNKS}`);
  return patchId ? edit(edited, WORKFLOW_IMPORT, ([, names]) => `import {${names}, patched } from '@temporalio/workflow';`) : edited;
}

/**
 * Writes a variant where the workflow bundler resolves its packages (under the checkout's
 * ignored `.tmp/`) and returns its path; `remove` deletes it.
 */
export function writeVariant(name: string, source: string): { path: string; remove(): void } {
  fs.mkdirSync(path.join(ROOT, '.tmp'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, '.tmp', `workflow-${name}-`));
  const file = path.join(dir, path.basename(JOB_WORKFLOW));
  fs.writeFileSync(file, source);
  return { path: file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export const todaysWorkflow = (): string => fs.readFileSync(JOB_WORKFLOW, 'utf8');
