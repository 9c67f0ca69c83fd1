import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { availableModels } from '../../models/contract/model-registry.ts';
import { testConfig, testServer } from './helpers.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testServer();
});
afterAll(() => app.close());

test('GET /openapi serves a valid OpenAPI 3.1 document without authentication', async () => {
  const res = await app.inject({ method: 'GET', url: '/openapi' });
  expect(res.statusCode).toBe(200);
  const doc = res.json();
  expect(doc.openapi).toBe('3.1.0');
  const result = await new Validator().validate(doc);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
});

test('the document is generated from the validating schemas', async () => {
  const doc = (await app.inject({ method: 'GET', url: '/openapi' })).json();
  const request = doc.components.schemas.ForecastRequest;
  expect(request.properties.horizon).toMatchObject({ minimum: 1, maximum: 10000 });
  expect(request.additionalProperties).toBe(false);
  expect(request.properties.freq.enum).toHaveLength(12);
  // The bulk arrays (engine/bulk-array.ts) document their element schemas like any array.
  const serie = doc.components.schemas.InputSerie.properties;
  expect(serie.target).toMatchObject({ type: 'array', minItems: 1, items: { anyOf: [{ type: 'number' }, { type: 'string', pattern: expect.any(String) }] } });
  expect(serie.index).toMatchObject({ type: 'array', minItems: 1, items: { type: 'string', example: '2024-01-31' } });
  const model = doc.paths['/forecast'].post.parameters.find((p: { name: string }) => p.name === 'model');
  expect(model.schema.$ref ?? model.schema.enum).toBeDefined();
  // The models this server runs (no foundation model is installed here); the others are named in the description.
  expect(doc.components.schemas.ModelName.enum).toEqual(availableModels(testConfig().engine.models));
  expect(doc.components.schemas.ModelName.enum).toContain('aets');
  expect(doc.components.schemas.ModelName.description).toContain('chronos-2');
  expect(Object.keys(doc.components.securitySchemes)).toHaveLength(2);
  expect(doc.paths['/openapi'].get.security).toEqual([]);
  expect(doc.paths['/forecast'].post.responses['422'].content['application/problem+json']).toBeDefined();
});

test('the job endpoints are documented under both prefixes, the earlier one deprecated', async () => {
  const doc = (await app.inject({ method: 'GET', url: '/openapi' })).json();
  for (const prefix of ['/forecast-jobs', '/backtest-jobs']) {
    expect(doc.paths[prefix].post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/ForecastRequest');
    expect(doc.paths[`${prefix}/{job_id}`].get.responses['404']).toBeDefined();
    expect(doc.paths[`${prefix}/{job_id}/predictions.parquet`]).toBeDefined();
  }
  expect(doc.paths['/backtest-jobs'].post.deprecated).toBe(true);
  expect(doc.paths['/forecast-jobs'].post.deprecated).toBe(false);
  expect(doc.components.schemas.JobSubmitted.required).toEqual(expect.arrayContaining(['job_id', 'call_id']));
});

test('what the service answers is documented: body errors of JSON operations, the operations endpoints, the default model', async () => {
  const doc = (await app.inject({ method: 'GET', url: '/openapi' })).json();
  for (const path of ['/forecast', '/forecast-jobs']) {
    expect(Object.keys(doc.paths[path].post.responses)).toEqual(expect.arrayContaining(['400', '413', '415', '422']));
  }
  expect(doc.paths['/readyz'].get.responses['503']).toBeDefined();
  for (const path of ['/healthz', '/readyz', '/metrics']) expect(doc.paths[path].get.security).toEqual([]);
  const model = doc.paths['/forecast'].post.parameters.find((p: { name: string }) => p.name === 'model');
  expect(JSON.stringify(model)).toContain('aets');
});

test('statuses and headers as the service sends them: dependency 503s, Retry-After, WWW-Authenticate, Location, the job list', async () => {
  const doc = (await app.inject({ method: 'GET', url: '/openapi' })).json();
  // A job operation's 503 is the job store's or Temporal's as well as a draining server's.
  for (const [path, method] of [
    ['/forecast-jobs/{job_id}', 'get'],
    ['/forecast-jobs/{job_id}', 'delete'],
    ['/forecast-jobs/{job_id}/cancel', 'post'],
    ['/v1-beta/forecast-jobs/{job_id}', 'get'],
    ['/v1-beta/forecast-schedules/{schedule_id}', 'get'],
  ]) {
    const unavailable = doc.paths[path][method].responses['503'];
    expect(unavailable.description, `${method} ${path}`).toMatch(/scheduler_unavailable.*shutting_down/s);
    expect(unavailable.headers['Retry-After']).toBeDefined();
  }
  expect(doc.paths['/v1-beta/forecast'].post.responses['503'].description).toMatch(/insufficient_memory/);
  expect(doc.paths['/forecast'].post.responses['401'].headers['WWW-Authenticate'].schema.const).toBe('Bearer');
  expect(doc.paths['/v1-beta/forecast-schedules'].post.responses['201'].headers.Location).toBeDefined();
  expect(doc.paths['/forecast-jobs/{job_id}/metrics.parquet'].get.responses['200'].headers['Content-Disposition']).toBeDefined();
  expect(doc.paths['/forecast-jobs'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/JobList');
  expect(doc.components.schemas.JobList.properties.jobs.items.required).toEqual(
    expect.arrayContaining(['job_id', 'kind', 'model', 'created_at', 'series', 'forecasts', 'status']),
  );
  // The reference (2.5): a prediction always has its mean.
  expect(doc.components.schemas.Prediction.properties.prediction.required).toEqual(['mean']);
});
