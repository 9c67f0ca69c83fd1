import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildServer } from '../../api/server.ts';
import { BetaResponse } from '../../engine/beta/response.ts';
import { testConfig } from '../api/helpers.ts';
import { postBeta, queryPart, tempDir, writeParquet } from './helpers.ts';

/**
 * The locator form: `input.source` is a path or glob under BETA_DATA_ROOT. Paths outside the
 * root, `..` and symbolic links that lead out are refused.
 */

const base = tempDir('beta-locator-');
const root = path.join(base, 'data');
let app: FastifyInstance;
let noRoot: FastifyInstance;

const daily = (store: string, from: number) => `SELECT DATE '2024-01-01' + d::INTEGER AS ts, '${store}' AS store, d + ${from}.0 AS sales FROM range(10) r(d)`;

beforeAll(async () => {
  fs.mkdirSync(path.join(root, 'parts'), { recursive: true });
  fs.mkdirSync(path.join(base, 'outside'), { recursive: true });
  await writeParquet(path.join(root, 'sales.parquet'), daily('a', 1));
  await writeParquet(path.join(root, 'parts', 'p1.parquet'), daily('b', 100));
  await writeParquet(path.join(root, 'parts', 'p2.parquet'), daily('c', 200));
  await writeParquet(path.join(base, 'outside', 'secret.parquet'), daily('leaked', 0));
  fs.symlinkSync(path.join(base, 'outside', 'secret.parquet'), path.join(root, 'link.parquet'));
  fs.symlinkSync(path.join(base, 'outside'), path.join(root, 'escape'));
  const config = testConfig();
  app = await buildServer({ ...config, beta: { ...config.beta, dataRoot: root } });
  noRoot = await buildServer(testConfig());
});
afterAll(async () => {
  await app.close();
  await noRoot.close();
});

const query = (source: string) => ({
  input: { source, schema: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sales: { kind: 'target', aggregate: 'sum' } } },
  prediction_length: '2d',
  quantiles: [0.5],
});

describe('locators under the data root', () => {
  test('a file, with the roles under input.schema', async () => {
    const res = await postBeta(app, [queryPart(query('sales.parquet'))]);
    expect(res.statusCode).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    expect(data.identifiers.store).toEqual(['a', 'a']);
    expect(data.targets.sales.quantiles.mean).toEqual([10, 10]);
  });

  test('a glob reads every file it matches as one table', async () => {
    const res = await postBeta(app, [queryPart(query('parts/*.parquet'))]);
    expect(res.statusCode).toBe(200);
    const { data } = BetaResponse.parse(res.json());
    expect(data.identifiers.store).toEqual(['b', 'b', 'c', 'c']);
    expect(data.targets.sales.quantiles.mean).toEqual([109, 109, 209, 209]);
  });

  test.each([
    ['../outside/secret.parquet', /'\.\.' is not allowed/],
    ['parts/../../outside/secret.parquet', /'\.\.' is not allowed/],
    [path.join(base, 'outside', 'secret.parquet'), /outside the data root/],
    ['link.parquet', /leads outside the data root \(a symbolic link\)/],
    ['escape/*.parquet', /leads outside the data root \(a symbolic link\)/],
    ['nothing/*.parquet', /matches no file under the data root/],
    ['s3://bucket/sales/*.parquet', /s3:\/\/ locators are not enabled on this server/],
    ['inline://sales', /inline:\/\/ names an uploaded part: write it as \{"uri": "inline:\/\/sales"\}/],
  ])('refused: %s', async (locator, message) => {
    const res = await postBeta(app, [queryPart(query(locator))]);
    expect(res.statusCode).toBe(422);
    const problem = res.json();
    expect(problem.errors[0].path).toBe('body.query.input.source');
    expect(problem.detail).toMatch(message);
    expect(JSON.stringify(problem)).not.toContain('leaked');
  });

  test('without BETA_DATA_ROOT, local locators are refused', async () => {
    const res = await postBeta(noRoot, [queryPart(query('sales.parquet'))]);
    expect(res.statusCode).toBe(422);
    expect(res.json().detail).toMatch(/BETA_DATA_ROOT is not set/);
  });
});
