import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config.ts';
import { inspectModel, requireInstalled, ModelNotInstalledError } from '../../../models/families/foundation/model-store.ts';
import { FIXTURES_DIR } from './reference.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'models-dir-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Copies the fixture's model folder (manifest and ONNX file) into the temporary MODELS_DIR. */
function install(name: string): string {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder);
  for (const file of ['manifest.json', 'model.onnx']) fs.copyFileSync(path.join(FIXTURES_DIR, name, file), path.join(folder, file));
  return folder;
}

/** The operator's hint of an unusable model, after checking that the client's reason names no server path. */
const reasonOf = (name: 'chronos-2' | 'timesfm-2p5') => {
  const found = inspectModel(name, dir);
  if (found.ok) throw new Error('expected the model to be unusable');
  expect(found.reason).not.toContain(dir);
  expect(found.reason).toMatch(found.state === 'not_installed' ? /is not installed on this server$/ : /failed verification on this server/);
  return found.hint;
};

/** MODELS_DIR as the configuration resolves it. */
const modelsDir = (env: Record<string, string>) => loadConfig(env).engine.models.modelsDir;

describe('the model store', () => {
  it('resolves MODELS_DIR, else DATA_DIR/models, else ./data/models', () => {
    expect(modelsDir({ MODELS_DIR: '/srv/models', DATA_DIR: '/srv/data' })).toBe('/srv/models');
    expect(modelsDir({ DATA_DIR: '/srv/data' })).toBe('/srv/data/models');
    expect(modelsDir({})).toBe(path.resolve('data/models'));
  });

  it('accepts an installed, intact model and describes it', () => {
    install('chronos-2');
    const model = requireInstalled('chronos-2', dir);
    expect(model.manifest.model).toBe('chronos-2');
    expect(model.onnxPath).toBe(path.join(dir, 'chronos-2', 'model.onnx'));
  });

  it('names the folder and files it expects, and how to export, when nothing is installed', () => {
    const reason = reasonOf('chronos-2');
    expect(reason).toContain(path.join(dir, 'chronos-2'));
    expect(reason).toContain('manifest.json');
    expect(reason).toContain('tools/export/export.py chronos-2');
    expect(() => requireInstalled('chronos-2', dir)).toThrow(ModelNotInstalledError);
    expect(() => requireInstalled('chronos-2', dir)).toThrow(/^its exported model is not installed on this server$/);
  });

  it('says which manifest field is wrong', () => {
    const folder = install('timesfm-2p5');
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'manifest.json'), 'utf8'));
    fs.writeFileSync(path.join(folder, 'manifest.json'), JSON.stringify({ ...manifest, quantile_levels: [0.9, 0.1], surprise: 1 }));
    const reason = reasonOf('timesfm-2p5');
    expect(reason).toContain('quantile_levels');
    expect(reason).toContain('surprise');
  });

  it('refuses a manifest that is not JSON, or that describes another model', () => {
    const folder = install('chronos-2');
    fs.writeFileSync(path.join(folder, 'manifest.json'), '{ not json');
    expect(reasonOf('chronos-2')).toContain('not valid JSON');
    fs.mkdirSync(path.join(dir, 'timesfm-2p5'));
    fs.copyFileSync(path.join(FIXTURES_DIR, 'chronos-2', 'manifest.json'), path.join(dir, 'timesfm-2p5', 'manifest.json'));
    expect(reasonOf('timesfm-2p5')).toMatch(/model/);
  });

  it('detects a missing, truncated or corrupt ONNX file', () => {
    const folder = install('chronos-2');
    const onnx = path.join(folder, 'model.onnx');
    const bytes = fs.readFileSync(onnx);
    fs.rmSync(onnx);
    expect(reasonOf('chronos-2')).toContain(`expected at ${onnx}`);
    fs.writeFileSync(onnx, bytes.subarray(0, bytes.length - 10));
    expect(reasonOf('chronos-2')).toContain('bytes but the manifest says');
    const corrupt = Buffer.from(bytes);
    corrupt[corrupt.length >> 1] ^= 0xff;
    fs.writeFileSync(onnx, corrupt);
    expect(reasonOf('chronos-2')).toContain('is corrupt: SHA-256');
  });
});
