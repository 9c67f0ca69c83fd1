/**
 * The layout of ARCHITECTURE (README, "Layout"), checked on the code's own imports: data flows one
 * way, nothing imports in a circle, the environment is read in config.ts alone, and every source
 * file stays small enough to read in one sitting.
 */
import fs from 'node:fs';
import path from 'node:path';
import madge from 'madge';
import { beforeAll, describe, expect, test } from 'vitest';
import { MODEL_NAMES } from '../models/contract/model-registry.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCES = ['config.ts', 'config', 'bin', 'api', 'engine', 'models', 'store', 'activities', 'workflows', 'datasets', 'telemetry', 'web'];

/** What each part may import (besides itself and packages). `bin` wires everything. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  // config.ts and its parts in config/: one part, the environment's only reader.
  config: [],
  bin: SOURCES,
  api: ['config', 'engine', 'store', 'models', 'workflows', 'telemetry'],
  activities: ['engine', 'models', 'store', 'telemetry'],
  workflows: ['activities'],
  store: ['config', 'engine'],
  engine: ['models', 'telemetry'],
  models: [],
  datasets: [],
  // The process's metrics registry: recorded into from below and above alike, importing nothing.
  telemetry: [],
  // The dashboard, bundled for the browser: it talks to the API over HTTP only, so it imports none of ours.
  web: [],
};

/**
 * Inside models/: the contract (the interface and the registry, which loads the families), one
 * folder per family, and the numerics several families share. A family reaches another only where
 * it is built on it (mstl forecasts its trend with aets or aarima); numerics know no family.
 * `install` (the `models` command's work) puts foundation models' exports where the registry finds
 * them; no model imports it.
 */
const MODEL_PARTS_MAY_IMPORT: Record<string, readonly string[]> = {
  contract: ['families/*'],
  numerics: ['contract'],
  'families/*': ['contract', 'numerics'],
  'families/mstl': ['contract', 'numerics', 'families/ets', 'families/arima'],
  install: ['contract', 'families/foundation'],
};

/** `contract`, `numerics` or `families/<name>` for a file under models/. */
const modelPartOf = (file: string) =>
  file
    .split('/')
    .slice(1, file.startsWith('models/families/') ? 3 : 2)
    .join('/');

const partOf = (file: string) => (file === 'config.ts' ? 'config' : file.includes('/') ? file.slice(0, file.indexOf('/')) : file);

let graph: Record<string, string[]>;
let circles: string[][];
beforeAll(async () => {
  const result = await madge(SOURCES, { baseDir: ROOT, fileExtensions: ['ts', 'tsx', 'mjs'] });
  graph = result.obj();
  circles = result.circular();
});

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (entry: string) => {
    const full = path.join(ROOT, entry);
    if (fs.statSync(full).isDirectory()) for (const name of fs.readdirSync(full)) walk(path.join(entry, name));
    else if (/\.(ts|tsx|mjs)$/.test(entry)) out.push(entry);
  };
  SOURCES.forEach(walk);
  return out;
}

describe('the layout', () => {
  test('no module imports another in a circle', () => {
    expect(circles).toEqual([]);
  });

  test('data flows one way: each part imports only the parts below it', () => {
    const upward: string[] = [];
    for (const [file, imports] of Object.entries(graph)) {
      const from = partOf(file);
      for (const target of imports) {
        const to = partOf(target);
        if (to !== from && !MAY_IMPORT[from]?.includes(to)) upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  test('inside models/, families import the contract and the shared numerics, and numerics no family', () => {
    const mayImport = (from: string) => MODEL_PARTS_MAY_IMPORT[from] ?? (from.startsWith('families/') ? MODEL_PARTS_MAY_IMPORT['families/*'] : []);
    const allowed = (from: string, to: string) => mayImport(from).some((part) => part === to || (part === 'families/*' && to.startsWith('families/')));
    const crossing: string[] = [];
    for (const [file, imports] of Object.entries(graph)) {
      if (!file.startsWith('models/')) continue;
      // Imports leaving models/ are the data-flow test's concern.
      for (const target of imports.filter((t) => t.startsWith('models/'))) {
        const [from, to] = [modelPartOf(file), modelPartOf(target)];
        if (from !== to && !allowed(from, to)) crossing.push(`${file} -> ${target}`);
      }
    }
    expect(crossing).toEqual([]);
  });

  test('no model is named outside models/: models own their options (their registry entries declare them)', () => {
    // config.ts's DEFAULT_MODEL default is a deployment setting (docs/decisions/014-default-model-aets.md);
    // web/ is a client of the API and names models as any client may.
    const exempt = (file: string) => file === 'config.ts' || file.startsWith('web/') || file.startsWith('models/');
    // A name as a whole string literal (code that picks a model); prose in a description may name one.
    const quoted = new RegExp(`['"](${MODEL_NAMES.map((name) => name.replace(/[-.]/g, '\\$&')).join('|')})['"]`);
    const naming = sourceFiles()
      .filter((file) => !exempt(file))
      .flatMap((file) =>
        fs
          .readFileSync(path.join(ROOT, file), 'utf8')
          .split('\n')
          .flatMap((line, i) => (quoted.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(naming).toEqual([]);
  });

  test('workflows import only the types of the activities they orchestrate', () => {
    const text = fs.readFileSync(path.join(ROOT, 'workflows/forecast-job.ts'), 'utf8');
    const imports = [...text.matchAll(/^import (type )?.* from '([^']+)';$/gm)];
    expect(imports.filter(([, type, from]) => !from.startsWith('@temporalio/workflow') && !type)).toEqual([]);
  });

  test('the environment is read in config.ts (and config/) alone', () => {
    const readers = sourceFiles().filter((file) => partOf(file) !== 'config' && fs.readFileSync(path.join(ROOT, file), 'utf8').includes('process.env'));
    expect(readers).toEqual([]);
  });

  test('every source file has at most 400 lines', () => {
    const long = sourceFiles()
      .map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 400);
    expect(long).toEqual([]);
  });
});
