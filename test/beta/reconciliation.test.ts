import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildOpenApiDocument } from '../../api/openapi.ts';
import { buildServer } from '../../api/server.ts';
import { BetaResponse } from '../../engine/beta/response.ts';
import { testConfig } from '../api/helpers.ts';
import { filePart, postBeta, queryPart, tempDir, writeParquet } from './helpers.ts';
import { GROUPED, groupedInput, incoherence, TREE, treeQuery, type MeanRow } from './hierarchy-data.ts';

/**
 * Reconciliation in the synchronous beta answer (beyond the reference): every method on a
 * three-level tree built in DuckDB gives coherent means, with quantiles, the level of each row
 * and the base mean beside the reconciled one; the grouped structure takes min_trace and
 * refuses the top-down methods; every refusal names its field.
 */

const dir = tempDir('beta-reconciliation-');
let app: FastifyInstance;
let tree: string;
let grouped: string;
let gappy: string;

beforeAll(async () => {
  tree = await writeParquet(path.join(dir, 'tree.parquet'), TREE);
  grouped = await writeParquet(path.join(dir, 'grouped.parquet'), GROUPED);
  // Store e1 sells sku a until 2024-01-21 and sku b from 2024-02-10: at a cutoff between, it has no bottom.
  gappy = await writeParquet(
    path.join(dir, 'gappy.parquet'),
    `SELECT * FROM (${TREE}) UNION ALL
     SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY, 'east', 'e1', CASE WHEN d <= 20 THEN 'a' ELSE 'b' END, 10.0 + d
     FROM range(56) r(d) WHERE d <= 20 OR d >= 40`,
  );
  app = await buildServer(testConfig());
});
afterAll(async () => {
  await app.close();
});

const IDS = ['region', 'store', 'sku'];
const post = (query: unknown, file = tree, model = 'aets') => postBeta(app, [queryPart(query), filePart('sales', file)], model);

/** The answer's rows as (ids, where, mean) for the coherence check. */
function meanRows(body: BetaResponse, ids = IDS, mean = body.data.targets.units.quantiles.mean): MeanRow[] {
  return body.data.time.map((time, i) => ({ ids: ids.map((name) => body.data.identifiers[name][i]), at: `${body.data.cutoff[i]}|${time}`, mean: mean[i] }));
}

const METHODS: [string, Record<string, unknown>][] = [
  ['bottom_up', { method: 'bottom_up' }],
  ['top_down by forecast proportions', { method: 'top_down' }],
  ['top_down by average historical proportions', { method: 'top_down', proportions: 'average_proportions' }],
  ['top_down by proportions of historical averages', { method: 'top_down', proportions: 'proportion_averages' }],
  ['middle_out at the stores', { method: 'middle_out', middle_level: ['region', 'store'] }],
  ['middle_out by historical proportions', { method: 'middle_out', middle_level: ['region', 'store'], proportions: 'average_proportions' }],
  ['min_trace ols', { method: 'min_trace', estimator: 'ols' }],
  ['min_trace wls_struct', { method: 'min_trace', estimator: 'wls_struct' }],
  ['min_trace wls_var', { method: 'min_trace', estimator: 'wls_var' }],
  ['min_trace mint_shrink', { method: 'min_trace', estimator: 'mint_shrink' }],
];

describe('every method on a three-level tree', () => {
  let base: BetaResponse;
  beforeAll(async () => {
    base = BetaResponse.parse((await post(treeQuery())).json());
  });

  test.each(METHODS)('%s: coherent means, quantiles, levels and base means', async (_name, reconciliation) => {
    const res = await post(treeQuery({ reconciliation }));
    expect(res.statusCode, res.body).toBe(200);
    const body = BetaResponse.parse(res.json());
    const { data } = body;
    // 12 skus, 4 stores, 2 regions; 2 cutoffs of 7 steps.
    expect(data.time).toHaveLength(18 * 14);
    const { worst, aggregates } = incoherence(meanRows(body));
    expect(aggregates).toBe(6 * 14);
    expect(worst).toBeLessThan(1e-9);
    expect(Object.keys(data.targets.units.quantiles)).toEqual(['mean', '0.1', '0.9']);
    data.targets.units.quantiles.mean.forEach((m, i) => {
      expect(data.targets.units.quantiles['0.1'][i]).toBeLessThanOrEqual(m);
      expect(data.targets.units.quantiles['0.9'][i]).toBeGreaterThanOrEqual(m);
    });
    expect(new Set(data.level)).toEqual(new Set(['region/store/sku', 'region/store', 'region']));
    data.level!.forEach((level, i) => expect(level).toBe(IDS.filter((name) => data.identifiers[name][i] !== null).join('/')));
    // The base forecasts stay beside the reconciled ones: the answer without reconciliation, row for row.
    expect(data.identifiers).toEqual(base.data.identifiers);
    expect(data.targets.units.base_mean).toEqual(base.data.targets.units.quantiles.mean);
    expect(incoherence(meanRows(body, IDS, data.targets.units.base_mean)).worst).toBeGreaterThan(1e-6);
    // Metrics score the reconciled forecasts, and name their level.
    expect(body.metrics!.level).toHaveLength(18 * 2);
    expect(body.metrics!.targets.units.mae).not.toEqual(base.metrics!.targets.units.mae);
  });

  test("bottom_up keeps the bottoms' base forecasts: means exactly, quantiles through the normal approximation", async () => {
    const { data } = BetaResponse.parse((await post(treeQuery({ reconciliation: { method: 'bottom_up' } }))).json());
    const bottoms = data.level!.flatMap((level, i) => (level === 'region/store/sku' ? [i] : []));
    for (const i of bottoms) {
      expect(data.targets.units.quantiles.mean[i]).toBe(base.data.targets.units.quantiles.mean[i]);
      for (const q of ['0.1', '0.9']) expect(data.targets.units.quantiles[q][i]).toBeCloseTo(base.data.targets.units.quantiles[q][i], 9);
    }
  });

  test('top_down keeps the top level as forecast', async () => {
    const { data } = BetaResponse.parse((await post(treeQuery({ reconciliation: { method: 'top_down' } }))).json());
    data.level!.forEach((level, i) => {
      if (level === 'region') expect(data.targets.units.quantiles.mean[i]).toBeCloseTo(base.data.targets.units.quantiles.mean[i], 9);
    });
  });

  test('quantiles without a symmetric pair: a mirror is forecast to read the spread, and the answer holds only the levels asked for', async () => {
    const res = await post(treeQuery({ quantiles: [0.5], reconciliation: { method: 'min_trace' } }));
    expect(res.statusCode).toBe(200);
    const { quantiles } = res.json().data.targets.units;
    expect(Object.keys(quantiles)).toEqual(['mean', '0.5']);
    // The reconciled distribution is symmetric: its median is its mean.
    quantiles['0.5'].forEach((q: number, i: number) => expect(q).toBeCloseTo(quantiles.mean[i], 9));
  });
});

describe('a grouped structure (stores crossed with categories)', () => {
  const groupedQuery = (reconciliation: unknown) => treeQuery({ reconciliation }, groupedInput);

  test('min_trace reconciles every level', async () => {
    const res = await post(groupedQuery({ method: 'min_trace', estimator: 'mint_shrink' }), grouped);
    expect(res.statusCode, res.body).toBe(200);
    const body = BetaResponse.parse(res.json());
    expect(new Set(body.data.level)).toEqual(new Set(['region/store/category/sku', 'region/store/category', 'region/category/sku', 'region/category']));
    const { worst, aggregates } = incoherence(meanRows(body, ['region', 'store', 'category', 'sku']));
    expect(aggregates).toBeGreaterThan(0);
    expect(worst).toBeLessThan(1e-9);
  });

  test.each([
    ['top_down', { method: 'top_down' }],
    ['middle_out', { method: 'middle_out', middle_level: ['region', 'category'] }],
  ])('%s is refused: its levels cross', async (_name, reconciliation) => {
    const res = await post(groupedQuery(reconciliation), grouped);
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: 'body.query.reconciliation.method', message: expect.stringMatching(/needs a tree.*cross/) }]);
  });
});

describe('refusals name their field', () => {
  test.each([
    ['an unknown method', { reconciliation: { method: 'sideways' } }, 'body.query.reconciliation.method', /method is one of bottom_up/],
    ['an unknown estimator', { reconciliation: { method: 'min_trace', estimator: 'mint_full' } }, 'body.query.reconciliation.estimator', /estimator is one of/],
    ['an option of another method', { reconciliation: { method: 'bottom_up', estimator: 'ols' } }, 'body.query.reconciliation.estimator', /min_trace only/],
    ['middle_out without its level', { reconciliation: { method: 'middle_out' } }, 'body.query.reconciliation.middle_level', /needs middle_level/],
    [
      'a middle level the hierarchy does not have',
      { reconciliation: { method: 'middle_out', middle_level: ['sku'] } },
      'body.query.reconciliation.middle_level',
      /not a level of the hierarchies/,
    ],
    [
      'a selector without the bottom level',
      { selector: { sku: null }, reconciliation: { method: 'bottom_up' } },
      'body.query.selector',
      /needs the bottom level \{region, store, sku\}/,
    ],
    [
      'a selector without the top level top_down starts from',
      { selector: { store: 'any' }, reconciliation: { method: 'top_down' } },
      'body.query.selector',
      /needs the top level \{region\}/,
    ],
    [
      'mint_shrink with fewer residuals than it needs',
      { reconciliation: { method: 'min_trace', estimator: 'mint_shrink', residual_window: 2 } },
      'body.query.reconciliation.residual_window',
      /needs at least 3 residuals/,
    ],
    [
      'a middle level that names an identifier twice',
      { reconciliation: { method: 'middle_out', middle_level: ['region', 'region'] } },
      'body.query.reconciliation.middle_level',
      /name each identifier of the middle level once/,
    ],
    [
      'a residual window on an estimator that reads none',
      { reconciliation: { method: 'min_trace', residual_window: 10 } },
      'body.query.reconciliation.residual_window',
      /reads one-step residuals/,
    ],
  ])('%s', async (_name, extra, field, message) => {
    const res = await post(treeQuery(extra));
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().errors).toEqual([{ path: field, message: expect.stringMatching(message) }]);
  });

  test.each(['mean', 'min', 'max', 'median'])('a target whose roll-up is its %s, not a sum', async (aggregate) => {
    const columns = {
      day: { kind: 'time', frequency: '1d' },
      region: 'identifier',
      store: 'identifier',
      sku: 'identifier',
      units: { kind: 'target', aggregate },
    };
    const res = await post(treeQuery({ reconciliation: { method: 'bottom_up' } }, { columns }));
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([
      {
        path: 'body.query.input.columns.units.aggregate',
        message: expect.stringMatching(/makes each parent the sum of its children, but 'units' rolls up by its/),
      },
    ]);
  });

  test('reconciliation without hierarchies', async () => {
    const res = await post(treeQuery({ reconciliation: { method: 'bottom_up' } }, { hierarchies: undefined }));
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ path: 'body.query.reconciliation', message: expect.stringContaining('needs input.hierarchies') }]);
  });

  test('mint_shrink on a history too short for its residual window', async () => {
    const res = await post(treeQuery({ reconciliation: { method: 'min_trace', estimator: 'mint_shrink', residual_window: 45 } }));
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([
      {
        path: 'body.query.reconciliation.residual_window',
        message: expect.stringMatching(/has 42 observations up to the cutoff 2024-02-11T00:00:00Z; residual_window 45 needs at least 46/),
      },
    ]);
  });

  test('a level with no data at a cutoff: an aggregate none of whose bottoms is forecast there', async () => {
    const query = treeQuery(
      { cutoff: ['2024-01-28'], reconciliation: { method: 'bottom_up' } },
      { columns: { ...treeQuery().input.columns, units: { kind: 'target', aggregate: 'sum', impute: 'zero' } } },
    );
    const res = await post(query, gappy);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().errors).toEqual([
      {
        path: 'body.query.reconciliation',
        message: expect.stringMatching(/at cutoff 2024-01-28T00:00:00Z: the series region=east(, store=e1)? has no bottom series under it/),
      },
    ]);
  });
});

test('the field is documented from its schema, for scheduled queries too', () => {
  const schemas = (buildOpenApiDocument('t') as unknown as { components: { schemas: Record<string, any> } }).components.schemas;
  for (const query of ['BetaQuery', 'ScheduledBetaQuery'])
    expect(schemas[query].properties.reconciliation.$ref).toBe('#/components/schemas/BetaReconciliation');
  expect(schemas.BetaReconciliation.properties.method.enum).toEqual(['bottom_up', 'top_down', 'middle_out', 'min_trace']);
  expect(schemas.BetaResponse.properties.data.properties.level).toBeDefined();
});
