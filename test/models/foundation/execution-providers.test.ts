import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { chooseProviders, ExecutionProviderUnavailableError, PROBE_GRAPH, probeProvider } from '../../../models/families/foundation/execution-providers.ts';
import { AUTH, testServer } from '../../api/helpers.ts';
import { hourlyForecastBody, postForecast, withModels } from './service-helpers.ts';
import { FIXTURES_DIR } from './reference.ts';

/**
 * Which execution provider sessions run on. The tests run where ONNX Runtime has no CUDA provider
 * installed (CPU machines): there the server chooses the CPU, and a configuration naming CUDA
 * fails clearly at warm-up and forecast, never running on the CPU instead.
 */

const binding = path.join(path.dirname(createRequire(import.meta.url).resolve('onnxruntime-node')), '..', 'bin', 'napi-v6', process.platform, process.arch);
const cudaInstalled = fs.existsSync(path.join(binding, 'libonnxruntime_providers_cuda.so'));
const withoutCuda = cudaInstalled ? 'skipped: the CUDA provider is installed here' : 'no CUDA provider installed';

test('the probe graph is a valid model: y = x + x on one float, on the CPU', async () => {
  const session = await ort.InferenceSession.create(PROBE_GRAPH, { executionProviders: ['cpu'] });
  const out = await session.run({ x: new ort.Tensor('float32', Float32Array.from([2.5]), [1]) });
  expect(Array.from(out.y.data as Float32Array)).toEqual([5]);
  await session.release();
  expect(await probeProvider('cpu')).toBeNull();
});

test('a configuration naming only the CPU is taken as it is', async () => {
  expect(await chooseProviders(['cpu'])).toEqual({ sessionProviders: ['cpu'], provider: 'cpu', automatic: false });
});

describe.skipIf(cudaInstalled)(`without a CUDA provider (${withoutCuda})`, () => {
  test('the server chooses the CPU', async () => {
    expect(await chooseProviders(null)).toEqual({ sessionProviders: ['cpu'], provider: 'cpu', automatic: true });
    expect(await chooseProviders([])).toMatchObject({ provider: 'cpu', automatic: true });
  });

  test('a configuration naming CUDA is refused, naming the provider to the client and the setting to the operator', async () => {
    const refusal = await chooseProviders(['cuda', 'cpu']).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ExecutionProviderUnavailableError);
    const error = refusal as ExecutionProviderUnavailableError;
    expect(error.message).toBe('it is set to run on the cuda execution provider, which cannot start on this server');
    expect(error.operatorDetail).toContain('ONNX_EXECUTION_PROVIDERS names cuda');
  });

  describe('a server configured with ONNX_EXECUTION_PROVIDERS=cuda,cpu', () => {
    let app: FastifyInstance;
    beforeAll(async () => {
      const config = withModels(FIXTURES_DIR);
      const models = { ...config.engine.models, executionProviders: ['cuda', 'cpu'] };
      app = await testServer({ engine: { ...config.engine, modelThreads: 1, models } });
    });
    afterAll(() => app?.close());

    test('answers warm-up and forecasts of a foundation model with 422 model_unavailable naming cuda, never a CPU forecast', async () => {
      const answers = [
        await app.inject({ method: 'GET', url: '/warmup?model=timesfm-2', headers: AUTH }),
        await postForecast(app, 'timesfm-2', hourlyForecastBody()),
      ];
      for (const res of answers) {
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json()).toMatchObject({
          code: 'model_unavailable',
          detail: expect.stringContaining("model 'timesfm-2' is not available on this server: it is set to run on the cuda execution provider"),
        });
        expect(res.body).not.toContain(FIXTURES_DIR);
        expect(res.body).not.toContain('node_modules');
      }
    });

    test('statistical models are not affected, and the catalogue says which provider it was set to', async () => {
      expect((await app.inject({ method: 'GET', url: '/warmup?model=aets', headers: AUTH })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/models/timesfm-2', headers: AUTH })).json().execution_provider).toBe('cuda');
    });
  });
});
