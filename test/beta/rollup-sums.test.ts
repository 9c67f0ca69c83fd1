import path from 'node:path';
import { expect, test } from 'vitest';
import { prepareSeries, type PreparedData } from '../../engine/beta/prepare.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../../engine/beta/resolved-query.ts';
import { parquetSource } from '../../engine/beta/table-sources.ts';
import { withConnection } from '../../engine/sql.ts';
import { exactSum, ulp } from './exact-sum.ts';
import { betaTestDatabase, tempDir, writeParquet } from './helpers.ts';

/**
 * Roll-up sums and means do not depend on the order DuckDB adds a group's rows in (decision 065):
 * fractional data rolled up with one thread or four, from a file in time order or shuffled in
 * small row groups, gives the same bits, and each sum is the exact sum of its children to the
 * last place. With DuckDB's plain sum() these runs differed in the last bits.
 */

const dir = tempDir('beta-rollup-sums-');
const db = betaTestDatabase(dir);

// 200 skus in 20 stores in 4 regions, 56 days; values in thousandths and a tenth of a millionth.
const ROWS = `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS day, 'r' || (b % 4) AS region, 's' || (b % 20) AS store, 'k' || b AS sku,
         (hash(b * 7919 + d) % 1000000)::DOUBLE / 1000 AS units, (hash(b + d * 31) % 100000)::DOUBLE / 7 AS price,
         sin(b + d / 3) * 1e-7 AS temperature
  FROM range(200) t(b), range(56) r(d)`;

const query = resolveBetaQuery(
  BetaQuery.parse({
    input: {
      source: { uri: 'inline://sales' },
      columns: {
        day: { kind: 'time', frequency: '1d' },
        region: 'identifier',
        store: 'identifier',
        sku: 'identifier',
        units: { kind: 'target', aggregate: 'sum' },
        price: { kind: 'target', aggregate: 'mean' },
        temperature: 'historical',
      },
      hierarchies: { sku: [['store', 'region']] },
    },
    prediction_length: '7d',
  }),
);

async function prepare(file: string, threads: number): Promise<PreparedData> {
  return withConnection(db(), async (c) => {
    await c.run(`SET threads = ${threads}`);
    return prepareSeries(c, query, { input: parquetSource("part 'sales'", { root: 'upload', path: ['sales'] }, [file]), covariates: [] });
  });
}

/** Every value of every series, as the bits of its doubles. */
const bits = (data: PreparedData) =>
  data.series.map((s) => ({
    ids: s.ids,
    values: [...s.targets, ...s.covariates].map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')),
  }));

test('roll-ups give the same bits whatever the threads and row order, and their sums are exact', async () => {
  const inOrder = await writeParquet(path.join(dir, 'in-order.parquet'), `${ROWS} ORDER BY day, sku`);
  // Small row groups, so that several threads scan the file.
  const shuffled = path.join(dir, 'shuffled.parquet');
  await withConnection(db(), (c) => c.run(`COPY (${ROWS} ORDER BY hash(sku || day::VARCHAR)) TO '${shuffled}' (FORMAT parquet, ROW_GROUP_SIZE 512)`));
  const runs = [await prepare(inOrder, 1), await prepare(inOrder, 4), await prepare(shuffled, 4), await prepare(shuffled, 1)];
  // 200 skus, 20 stores, 4 regions.
  expect(runs[0].series).toHaveLength(224);
  for (const run of runs.slice(1)) expect(bits(run)).toEqual(bits(runs[0]));

  const [data] = runs;
  const bottoms = data.series.filter((s) => s.ids.every((v) => v !== null));
  for (const s of data.series.filter((r) => r.ids.includes(null))) {
    const children = bottoms.filter((b) => s.ids.every((v, i) => v === null || v === b.ids[i]));
    for (let k = 0; k < s.length; k++) {
      const units = children.map((c) => c.targets[0][k]);
      const sum = exactSum(units);
      // Only the conversion of the exact total back to a double rounds, to within a unit in the last place.
      expect(Math.abs(s.targets[0][k] - sum)).toBeLessThanOrEqual(ulp(sum));
      expect(s.targets[1][k]).toBeCloseTo(exactSum(children.map((c) => c.targets[1][k])) / children.length, 9);
    }
  }
});
