/**
 * `npm run models -- install | list | remove`, run as users run it (a child process reading its
 * environment), against a local Hub serving the tiny Chronos-2 checkpoint that
 * `tools/export/export.py chronos-2 --tiny-fixture --save-checkpoint` made
 * (test/fixtures/checkpoints/chronos-2). The export runs for real in the environment of
 * tools/export/requirements.txt: its first set-up installs torch (minutes), later runs reuse it.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chronos2Model } from '../../../models/families/foundation/chronos2.ts';
import { testTempDir } from '../../temp-root.ts';
import { Agreement, level, readReference, toFloat64, type JsonSeries } from '../foundation/reference.ts';
import { LocalHub } from './local-hub.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CHECKPOINT = path.join(ROOT, 'test/fixtures/checkpoints/chronos-2');
const REPO = 'amazon/chronos-2';
const TOKEN = 'hf_local_test_token';
const COMMIT = createHash('sha1').update('tiny chronos-2').digest('hex');
/** The first run may install the export environment (torch and chronos-forecasting). */
const FIRST_EXPORT_MS = 20 * 60_000;
const EXPORT_MS = 5 * 60_000;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const dir = testTempDir('models-install-');
const modelsDir = path.join(dir, 'models');
const downloadsDir = path.join(dir, 'downloads');
const installed = path.join(modelsDir, 'chronos-2');
const hub = new LocalHub(
  REPO,
  COMMIT,
  [
    { path: 'config.json', content: fs.readFileSync(path.join(CHECKPOINT, 'config.json')), lfs: false },
    { path: 'model.safetensors', content: fs.readFileSync(path.join(CHECKPOINT, 'model.safetensors')), lfs: true },
  ],
  TOKEN,
);
const WEIGHTS_BYTES = fs.statSync(path.join(CHECKPOINT, 'model.safetensors')).size;

/** `npm run models -- ...args` (the command package.json's script runs), in a clean environment plus `env`. */
function models(args: string[], env: Record<string, string> = {}, script = 'bin/models.ts'): Promise<Run> {
  const own = /^(HF_|MODELS_DIR$|MODEL_DOWNLOADS_DIR$|DATA_DIR$|FORECAST_)/;
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !own.test(name)));
  const settings = { MODELS_DIR: modelsDir, MODEL_DOWNLOADS_DIR: downloadsDir, HF_ENDPOINT: hub.url, HF_TOKEN: TOKEN, ...env };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script, ...args],
      { cwd: ROOT, env: { ...base, ...settings }, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

const entries = (folder: string) => (fs.existsSync(folder) ? fs.readdirSync(folder).sort() : []);
const partFiles = () =>
  entries(downloadsDir).flatMap((repo) =>
    entries(path.join(downloadsDir, repo))
      .filter((f) => f.endsWith('.part'))
      .map((f) => path.join(downloadsDir, repo, f)),
  );
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
/** The `models list` line of a model, its columns split. */
const listed = (stdout: string, name: string) =>
  stdout
    .split('\n')
    .find((line) => line.startsWith(`${name} `))
    ?.split(/\s{2,}/);

beforeAll(() => hub.start());
afterAll(() => hub.stop());

describe('npm run models', () => {
  test('an unknown model is a usage error that names the models it can install; nothing is written', async () => {
    const run = await models(['install', 'chronos-3']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: there is no model 'chronos-3'; models that can be installed: chronos-2, timesfm-2p5,/);
    expect(run.stderr).not.toMatch(/ at .*\.ts:\d+/);
    expect((await models(['install', 'aets'])).stderr).toContain('aets is built in');
    expect(entries(dir)).toEqual([]);
  });

  test('list, before: every model in registry order, statistical ones built in, chronos-2 with the command that installs it', async () => {
    const run = await models(['list']);
    expect(run.code).toBe(0);
    expect(listed(run.stdout, 'aets')).toEqual(['aets', 'built in', '-', '-']);
    expect(listed(run.stdout, 'chronos-2')).toEqual(['chronos-2', 'not installed', '-', '-']);
    expect(listed(run.stdout, 't0-alpha')?.[1]).toBe('unavailable');
    expect(run.stdout).toContain('chronos-2: install: npm run models -- install chronos-2 --from-hub');
    expect(run.stdout).toContain('reverso: install: npm run models -- install reverso --checkpoint <checkpoint folder>');
    const names = run.stdout
      .split('\n')
      .slice(2, 6)
      .map((line) => line.split(' ')[0]);
    expect(names).toEqual(['naive', 'seasonal-naive', 'aets', 'aarima']);
  });

  test('without HF_TOKEN a gated repository is refused with what to do', async () => {
    const run = await models(['install', 'chronos-2', '--from-hub'], { HF_TOKEN: '' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the Hub refused ${REPO} at revision main (HTTP 401: Access to model is restricted`);
    expect(run.stderr).toContain('set HF_TOKEN to a token that can read it');
    expect(entries(modelsDir)).toEqual([]);
  });

  test('a download that breaks off is resumed; one that keeps breaking off fails, keeps what arrived, and leaves MODELS_DIR empty', async () => {
    hub.requests.length = 0;
    hub.faults.set('config.json', [{ breakAfter: 100 }]);
    hub.faults.set('model.safetensors', [{ breakAfter: 60_000 }, ...Array.from({ length: 4 }, () => ({ breakAfter: 0 }))]);
    const run = await models(['install', 'chronos-2', '--from-hub']);
    expect(run.stdout).toContain('config.json: the connection broke');
    expect(run.stdout).toContain('download config.json: verified');
    expect(hub.requests.filter((r) => r.url.includes('config.json')).map((r) => r.range ?? null)).toEqual([null, 'bytes=100-']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: the download of model.safetensors from ${REPO} broke off at 60000 of ${WEIGHTS_BYTES} bytes`);
    expect(run.stderr).toContain('run the same command again to resume it');
    expect(partFiles().map((file) => [path.basename(file), fs.statSync(file).size])).toEqual([['model.safetensors.part', 60_000]]);
    expect(entries(modelsDir)).toEqual([]);
  });

  test(
    'the next run resumes with a Range request, sends HF_TOKEN to the Hub alone, checks each file, exports, warms up and installs',
    async () => {
      hub.requests.length = 0;
      const run = await models(['install', 'chronos-2', '--from-hub']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/download model.safetensors: [\d.]+ KiB, resuming at 58.6 KiB/);
      expect(run.stdout).toMatch(/ONNX vs reference forward: max error relative to the largest output \d/);
      expect(run.stdout).toMatch(/\nwarm-up: \d+ ms on cpu\n/);
      expect(run.stdout).toContain(`installed chronos-2 at ${installed}`);

      const fetched = (server: 'hub' | 'cdn', file: string) =>
        hub.requests.filter((r) => r.server === server && r.url.includes(file)).map((r) => r.range ?? null);
      // config.json, complete from the run before, is checked on disk, not fetched again.
      expect(fetched('cdn', '')).toEqual(['bytes=60000-']);
      expect(fetched('hub', 'config.json')).toEqual([]);
      expect(hub.requests.filter((r) => r.server === 'hub').every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
      expect(hub.requests.filter((r) => r.server === 'cdn').map((r) => r.authorization)).toEqual([undefined]);

      // MODELS_DIR holds the model and nothing else; the download is gone.
      expect(entries(modelsDir)).toEqual(['chronos-2']);
      expect(entries(installed)).toEqual(['install.json', 'manifest.json', 'model.onnx']);
      expect(entries(downloadsDir)).toEqual([]);
      const record = readJson(path.join(installed, 'install.json'));
      expect(record.source).toMatchObject({ kind: 'hub', endpoint: hub.url, repo: REPO, revision: 'main', commit: COMMIT });
      expect(record.source.files.map((f: { path: string; bytes: number }) => [f.path, f.bytes])).toEqual([
        ['config.json', fs.statSync(path.join(CHECKPOINT, 'config.json')).size],
        ['model.safetensors', WEIGHTS_BYTES],
      ]);
      expect(readJson(path.join(installed, 'manifest.json'))).toMatchObject({
        version: `${REPO}@${COMMIT.slice(0, 12)}`,
        source: `${hub.url}/${REPO} at commit ${COMMIT}`,
      });
    },
    FIRST_EXPORT_MS,
  );

  test('the installed model forecasts as the reference pipeline does with that checkpoint', async () => {
    const reference = readReference<{
      cases: { name: string; horizon: number; quantiles: number[]; series: { target: JsonSeries }[]; expected: { mean: JsonSeries[] } }[];
    }>('chronos-2');
    const basic = reference.cases.find((c) => c.name === 'basic')!;
    const model = chronos2Model({ modelsDir, onnxThreads: 1, executionProviders: ['cpu'] });
    const tasks = basic.series.map((s) => ({ history: toFloat64(s.target), horizon: basic.horizon, quantiles: basic.quantiles, seasonLength: 1 }));
    const outputs = await model.forecastBatch(tasks, []);
    const agreement = new Agreement();
    outputs.forEach((o, i) => agreement.add(o.mean, basic.expected.mean[i], `series ${i} mean`, level(tasks[i].history)));
    expect(agreement.worst, agreement.where).toBeLessThan(1e-4);
  });

  test('list, after: installed and verified, its size and the Hub commit it came from', async () => {
    const run = await models(['list']);
    expect(listed(run.stdout, 'chronos-2')).toEqual([
      'chronos-2',
      'installed, verified',
      expect.stringMatching(/KiB$/),
      `hub ${REPO}@main (${COMMIT.slice(0, 12)})`,
    ]);
    expect(run.stdout).not.toContain('chronos-2: install:');
    // The client CLI runs the same command on the server's host.
    const viaForecast = await models(['models', 'list'], {}, 'bin/forecast.ts');
    expect(listed(viaForecast.stdout, 'chronos-2')).toEqual(listed(run.stdout, 'chronos-2'));
    expect(viaForecast.stdout).toContain('timesfm-2p5: install: forecast models install timesfm-2p5 --from-hub');
  });

  test('a file that fails its SHA-256 check is deleted, the install fails, and the previous install stays as it was', async () => {
    const before = { manifest: readJson(path.join(installed, 'manifest.json')), record: readJson(path.join(installed, 'install.json')) };
    hub.faults.set('model.safetensors', [{ corrupt: true }]);
    const run = await models(['install', 'chronos-2', '--from-hub']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`^error: model.safetensors of ${REPO} at ${COMMIT.slice(0, 12)} failed its check: SHA-256 [0-9a-f]{64}, the Hub lists [0-9a-f]{64}`),
    );
    expect(run.stderr).toContain('the file was deleted');
    expect(partFiles()).toEqual([]);
    expect(entries(modelsDir)).toEqual(['chronos-2']);
    expect(readJson(path.join(installed, 'manifest.json'))).toEqual(before.manifest);
    expect(readJson(path.join(installed, 'install.json'))).toEqual(before.record);
    expect(listed((await models(['list'])).stdout, 'chronos-2')?.[1]).toBe('installed, verified');
  });

  test(
    'an export that fails leaves the previous install as it was, and no staging folder',
    async () => {
      const broken = path.join(dir, 'broken-checkpoint');
      fs.mkdirSync(broken);
      fs.copyFileSync(path.join(CHECKPOINT, 'config.json'), path.join(broken, 'config.json'));
      fs.writeFileSync(path.join(broken, 'model.safetensors'), 'not a safetensors file');
      const run = await models(['install', 'chronos-2', '--checkpoint', broken]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('error: the export of chronos-2 failed (tools/export/export.py exited with 1); nothing was installed');
      expect(run.stderr).toContain('SafetensorError');
      expect(entries(modelsDir)).toEqual(['chronos-2']);
      expect(readJson(path.join(installed, 'install.json')).source.kind).toBe('hub');
    },
    EXPORT_MS,
  );

  test('--checkpoint: a missing folder, or one without the files the export reads, is a usage error', async () => {
    const missing = await models(['install', 'chronos-2', '--checkpoint', path.join(dir, 'nowhere')]);
    expect([missing.code, missing.stderr.trim()]).toEqual([2, `error: the checkpoint ${path.join(dir, 'nowhere')} does not exist`]);
    const empty = path.join(dir, 'empty-checkpoint');
    fs.mkdirSync(empty);
    const incomplete = await models(['install', 'chronos-2', '--checkpoint', empty]);
    expect(incomplete.code).toBe(2);
    expect(incomplete.stderr).toContain(`has no config.json, model.safetensors: chronos-2's export reads config.json, model.safetensors`);
    const both = await models(['install', 'chronos-2', '--checkpoint', empty, '--from-hub']);
    expect([both.code, both.stderr.trim()]).toEqual([2, 'error: give --checkpoint or --from-hub, not both']);
  });

  test(
    '--checkpoint DIR installs a local checkpoint folder over the previous install',
    async () => {
      const run = await models(['install', 'chronos-2', '--checkpoint', CHECKPOINT]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`installed chronos-2 at ${installed}`);
      expect(entries(modelsDir)).toEqual(['chronos-2']);
      expect(readJson(path.join(installed, 'install.json')).source).toEqual({ kind: 'checkpoint', path: CHECKPOINT });
      expect(listed((await models(['list'])).stdout, 'chronos-2')?.slice(1)).toEqual([
        'installed, verified',
        expect.stringMatching(/KiB$/),
        `checkpoint ${CHECKPOINT}`,
      ]);
    },
    EXPORT_MS,
  );

  test('a damaged install is listed as broken, with what is wrong and how to reinstall', async () => {
    fs.appendFileSync(path.join(installed, 'model.onnx'), 'x');
    const run = await models(['list']);
    expect(listed(run.stdout, 'chronos-2')?.slice(1, 2)).toEqual(['broken']);
    expect(run.stdout).toMatch(/chronos-2: model 'chronos-2': its ONNX file .*model\.onnx has \d+ bytes but the manifest says \d+/);
    expect(run.stdout).toContain('reinstall: npm run models -- install chronos-2 --from-hub');
  });

  test('remove deletes the folder; list shows the model not installed again; a second remove has nothing to do', async () => {
    const run = await models(['remove', 'chronos-2']);
    expect([run.code, run.stdout.trim()]).toEqual([0, `removed chronos-2 from ${modelsDir}`]);
    expect(entries(modelsDir)).toEqual([]);
    const after = await models(['list']);
    expect(listed(after.stdout, 'chronos-2')).toEqual(['chronos-2', 'not installed', '-', '-']);
    const again = await models(['remove', 'chronos-2']);
    expect([again.code, again.stdout.trim()]).toEqual([1, `chronos-2 is not installed in ${modelsDir}: nothing to remove`]);
  });
});
