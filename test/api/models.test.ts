import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { errorsPlugin } from '../../api/errors-plugin.ts';
import { EngineError } from '../../engine/errors.ts';
import { MODEL_NAMES, operatorHint } from '../../models/contract/model-registry.ts';
import { FIXTURES_DIR } from '../models/foundation/reference.ts';
import { AUTH, testConfig, testServer } from './helpers.ts';
import { testTempDir } from '../temp-root.ts';

/**
 * The model catalogue (GET /models, GET /models/{name}) on a server whose MODELS_DIR holds two
 * verified exports and a corrupt one: every known model, what it takes and allows, whether it runs
 * here, and never a server path. The operator's hint goes to the log, once.
 */

const modelsDir = testTempDir('catalogue-models-');
for (const name of ['timesfm-2', 'patchtst-fm', 'timesfm-2p5']) {
  fs.mkdirSync(path.join(modelsDir, name));
  for (const file of ['manifest.json', 'model.onnx']) fs.copyFileSync(path.join(FIXTURES_DIR, name, file), path.join(modelsDir, name, file));
}
const corrupt = fs.readFileSync(path.join(modelsDir, 'timesfm-2p5', 'model.onnx'));
corrupt[100] ^= 0xff;
fs.writeFileSync(path.join(modelsDir, 'timesfm-2p5', 'model.onnx'), corrupt);

const config = testConfig();
const settings = { ...config.engine.models, modelsDir };
let app: FastifyInstance;
beforeAll(async () => {
  app = await testServer({ engine: { ...config.engine, modelThreads: 1, models: settings } });
});
afterAll(() => app.close());

const get = (url: string, headers: Record<string, string> = AUTH) => app.inject({ method: 'GET', url, headers });
type Info = { name: string } & Record<string, unknown>;
const byName = async () => new Map(((await get('/models')).json().models as Info[]).map((m) => [m.name, m]));

describe('GET /models', () => {
  test('lists every known model in the order of the model list, and names no server path', async () => {
    const res = await get('/models');
    expect(res.statusCode).toBe(200);
    expect((res.json().models as Info[]).map((m) => m.name)).toEqual(MODEL_NAMES);
    expect(res.body).not.toContain(modelsDir);
    expect(res.body).not.toContain('tools/export');
  });

  test('a statistical model runs here, takes what its registry entry says, and has no export or provider', async () => {
    const models = await byName();
    expect(models.get('aets')).toEqual({
      name: 'aets',
      family: 'ets',
      kind: 'statistical',
      installed: true,
      export: null,
      unavailable_reason: null,
      covariates: [],
      quantiles: true,
      max_context: null,
      horizon: { min: 1, max: null },
      execution_provider: null,
    });
    expect(models.get('svc-global')).toMatchObject({ kind: 'global', covariates: ['historical', 'future', 'static', 'string', 'generated'] });
  });

  test('an installed foundation model: verified, its context and horizon limits from its manifest, the CPU by default', async () => {
    const models = await byName();
    const manifest = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES_DIR, name, 'manifest.json'), 'utf8'));
    expect(models.get('timesfm-2')).toMatchObject({
      family: 'timesfm',
      kind: 'foundation',
      installed: true,
      export: 'verified',
      unavailable_reason: null,
      covariates: ['future', 'generated'],
      max_context: manifest('timesfm-2').context_length,
      horizon: { min: 1, max: null },
      execution_provider: 'cpu',
    });
    const patch = manifest('patchtst-fm');
    expect(models.get('patchtst-fm')).toMatchObject({ installed: true, horizon: { min: 1, max: patch.context_length - 1 } });
  });

  test('a model not installed, one failing verification, one without an adapter, and one whose quantiles are its point', async () => {
    const models = await byName();
    expect(models.get('chronos-2')).toMatchObject({
      installed: false,
      export: 'not_installed',
      unavailable_reason: 'its exported model is not installed on this server',
      max_context: null,
    });
    expect(models.get('timesfm-2p5')).toMatchObject({ installed: false, export: 'failed_verification' });
    expect(models.get('timesfm-2p5')?.unavailable_reason).toContain('failed verification');
    expect(models.get('t0-alpha')).toMatchObject({ installed: false, export: null, execution_provider: null });
    expect(models.get('t0-alpha')?.unavailable_reason).toContain('no adapter');
    expect(models.get('reverso')).toMatchObject({ quantiles: false, installed: false });
  });

  test('needs a key, and refuses unknown parameters', async () => {
    expect((await get('/models', {})).statusCode).toBe(401);
    const res = await get('/models?surprise=1');
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: 'query.surprise', message: expect.any(String) }]);
  });
});

test('both operations are in /openapi, with the catalogue entry as a schema', async () => {
  const doc = (await get('/openapi', {})).json();
  expect(doc.paths['/models'].get.operationId).toBe('listModels');
  expect(doc.paths['/models/{name}'].get.operationId).toBe('getModel');
  expect(doc.paths['/models/{name}'].get.responses['404'].content['application/problem+json']).toBeDefined();
  expect(doc.components.schemas.ModelInfo.required).toEqual(
    expect.arrayContaining(['name', 'family', 'kind', 'installed', 'export', 'covariates', 'quantiles', 'max_context', 'horizon', 'execution_provider']),
  );
  expect(doc.components.schemas.WarmupResponse.required).toContain('execution_provider');
});

describe('GET /models/{name}', () => {
  test('answers the same entry as the list', async () => {
    const res = await get('/models/patchtst-fm');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual((await byName()).get('patchtst-fm'));
  });

  test('an unknown name is a 404 problem naming the known models', async () => {
    const res = await get('/models/no-such-model');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'not_found', detail: expect.stringContaining('aets') });
  });

  test('after a warm-up, the provider is the one the loaded session reports, as /warmup says', async () => {
    const warm = await get('/warmup?model=timesfm-2');
    expect(warm.statusCode, warm.body).toBe(200);
    expect(warm.json().execution_provider).toBe('cpu');
    expect((await get('/models/timesfm-2')).json().execution_provider).toBe('cpu');
    expect((await get('/warmup?model=aets')).json().execution_provider).toBeNull();
  });
});

describe('the install hint is for operators', () => {
  test('the client hears the model is not installed; the hint names the folder and the export command', async () => {
    const res = await get('/warmup?model=chronos-2');
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toContain("model 'chronos-2' is not available on this server: its exported model is not installed on this server");
    expect(res.body).not.toContain(modelsDir);
    const hint = operatorHint('chronos-2', settings);
    expect(hint).toContain(path.join(modelsDir, 'chronos-2'));
    expect(hint).toContain('python tools/export/export.py chronos-2');
    expect(operatorHint('aets', settings)).toBeNull();
    expect(operatorHint('t0-alpha', settings)).toBeNull();
  });

  test('is logged once per distinct hint, however often clients ask', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
    const logged = Fastify({ logger: { level: 'warn', stream } });
    await logged.register(errorsPlugin);
    logged.get('/refuse', async () => {
      throw new EngineError('model_unavailable', 'not installed on this server', null, 'place it in /srv/models/x');
    });
    for (let i = 0; i < 3; i++) expect((await logged.inject({ method: 'GET', url: '/refuse' })).statusCode).toBe(422);
    await logged.close();
    const hints = lines.filter((l) => l.includes('/srv/models/x'));
    expect(hints).toHaveLength(1);
    expect(JSON.parse(hints[0])).toMatchObject({ level: 40, code: 'model_unavailable', msg: 'place it in /srv/models/x' });
  });
});
