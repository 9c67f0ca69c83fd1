import path from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isoTimestamp } from '../../engine/beta/duration.ts';
import { openBetaDatabase } from '../../engine/beta/beta-database.ts';
import { prepareSeries, type PreparedData } from '../../engine/beta/prepare.ts';
import { parquetSource } from '../../engine/beta/table-sources.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../../engine/beta/resolved-query.ts';
import { EngineError } from '../../engine/errors.ts';
import { withConnection } from '../../engine/sql.ts';
import { BETA_ROOTS, HttpError } from '../../api/problem.ts';
import { parseOr422 } from '../../api/validation.ts';
import { asProblem } from '../api/helpers.ts';
import { tempDir, writeParquet } from './helpers.ts';

/** The schema logic on Parquet files written by DuckDB's COPY, checked number by number. */

let db: DuckDBInstance;
const dir = tempDir();
beforeAll(async () => {
  db = await openBetaDatabase({ tempDirectory: path.join(dir, 'duckdb-tmp') });
});
afterAll(() => db.closeSync());

let fileCount = 0;
async function prepare(query: Record<string, unknown>, inputSql: string, covariateSql: string[] = []): Promise<PreparedData> {
  const input = await writeParquet(path.join(dir, `in-${fileCount++}.parquet`), inputSql);
  const covariates = await Promise.all(covariateSql.map((sql) => writeParquet(path.join(dir, `cov-${fileCount++}.parquet`), sql)));
  const parsed = BetaQuery.parse({ prediction_length: '1d', ...query });
  return withConnection(db, (c) =>
    prepareSeries(c, resolveBetaQuery(parsed), {
      input: parquetSource("part 'sales'", { root: 'upload', path: ['sales'] }, [input]),
      covariates: covariates.map((file, i) => parquetSource(`part 'cov${i}'`, { root: 'upload', path: [`cov${i}`] }, [file])),
    }),
  );
}

async function refusal(work: Promise<unknown>) {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineError);
  return asProblem(error, BETA_ROOTS);
}

const input = (columns: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ input: { source: { uri: 'inline://sales' }, columns, ...extra } });
const values = (data: PreparedData, series = 0, target = 0) => Array.from(data.series[series].targets[target]);

describe('bucketing onto the frequency grid, duplicates combined by the aggregate', () => {
  // Day 1: 1 at 00:00, 2 at 06:00, 6 at 18:00. Day 2: 10 at 03:00, 20 at 09:00.
  const rows = `SELECT ts::TIMESTAMP AS ts, v FROM (VALUES ('2024-01-01 00:00', 1), ('2024-01-01 18:00', 6), ('2024-01-02 09:00', 20), ('2024-01-01 06:00', 2), ('2024-01-02 03:00', 10)) t(ts, v)`;
  const aggregates = ['sum', 'mean', 'min', 'max', 'first', 'last', 'count', 'median'];

  test('each aggregate over hourly rows in daily steps', async () => {
    const columns: Record<string, unknown> = { ts: { kind: 'time', frequency: '1d' } };
    for (const a of aggregates) columns[`v_${a}`] = { kind: 'target', aggregate: a };
    const data = await prepare(input(columns), `SELECT ts, ${aggregates.map((a) => `v AS v_${a}`).join(', ')} FROM (${rows})`);
    expect(data.series).toHaveLength(1);
    expect(isoTimestamp(data.series[0].start)).toBe('2024-01-01T00:00:00Z');
    const got = Object.fromEntries(data.targets.map((name, j) => [name, values(data, 0, j)]));
    expect(got).toEqual({
      v_sum: [9, 30],
      v_mean: [3, 15],
      v_min: [1, 10],
      v_max: [6, 20],
      v_first: [1, 10],
      v_last: [6, 20],
      v_count: [3, 2],
      v_median: [2, 15],
    });
  });

  test('hourly steps keep each hour; 6h steps start at midnight', async () => {
    const data = await prepare(input({ ts: { kind: 'time', frequency: '6h' }, v: { kind: 'target', aggregate: 'sum', impute: 'zero' } }), rows);
    expect(values(data)).toEqual([1, 2, 0, 6, 10, 20]);
  });

  test('time-zoned timestamps and ISO 8601 text are read as UTC instants', async () => {
    const data = await prepare(
      input({ ts: { kind: 'time', frequency: '1d' }, v: { kind: 'target', aggregate: 'sum' } }),
      `SELECT * FROM (VALUES (TIMESTAMPTZ '2024-01-02 01:30:00+02', 1.0), (TIMESTAMPTZ '2024-01-02 03:00:00+02', 2.0)) t(ts, v)`,
    );
    // 01:30+02 is 23:30 UTC the day before.
    expect(isoTimestamp(data.series[0].start)).toBe('2024-01-01T00:00:00Z');
    expect(values(data)).toEqual([1, 2]);
    const text = await prepare(
      input({ ts: { kind: 'time', frequency: '1d' }, v: { kind: 'target', aggregate: 'sum' } }),
      `SELECT * FROM (VALUES ('2024-01-02T01:30:00+02:00', 1.0), ('2024-01-02', 2.0)) t(ts, v)`,
    );
    expect(values(text)).toEqual([1, 2]);
  });

  test('text that is not a date is refused with an example', async () => {
    const error = await refusal(
      prepare(
        input({ ts: { kind: 'time', frequency: '1d' }, v: { kind: 'target', aggregate: 'sum' } }),
        `SELECT * FROM (VALUES ('2024-01-01', 1.0), ('yesterday', 2.0)) t(ts, v)`,
      ),
    );
    expect(error.status).toBe(422);
    expect(error.errors![0]).toMatchObject({ path: 'body.query.input.columns.ts' });
    expect(error.message).toMatch(/'yesterday'/);
  });

  test('a missing column is named with the columns the file has', async () => {
    const error = await refusal(prepare(input({ ts: { kind: 'time', frequency: '1d' }, units: { kind: 'target', aggregate: 'sum' } }), rows));
    expect(error.errors).toEqual([{ path: 'body.query.input.columns.units', message: "part 'sales' has no column 'units'; its columns are ts, v" }]);
  });

  test('a text target is refused', async () => {
    const error = await refusal(
      prepare(input({ ts: { kind: 'time', frequency: '1d' }, v: { kind: 'target', aggregate: 'sum' } }), `SELECT ts, CAST(v AS VARCHAR) AS v FROM (${rows})`),
    );
    expect(error.errors![0].message).toMatch(/column 'v' is VARCHAR; a target must be numeric/);
  });

  test("columns may carry the names of the service's own tables' columns", async () => {
    // The grouping joins the upload to the series dictionary (sid, lvl, i0...); both have a rowid.
    const named = `SELECT ts AS "rowid", v AS sid, v * 10 AS lvl, v + 1 AS i0, CASE WHEN v < 5 THEN 'a' ELSE 'b' END AS store FROM (${rows})`;
    const columns = {
      rowid: { kind: 'time', frequency: '1d' },
      store: 'identifier',
      sid: { kind: 'target', aggregate: 'sum' },
      lvl: { kind: 'target', aggregate: 'last' },
    };
    const streamed = await prepare(input(columns), named);
    expect(streamed.series.map((s) => s.ids)).toEqual([['a'], ['b']]);
    expect([values(streamed, 0, 0), values(streamed, 1, 0), values(streamed, 1, 1)]).toEqual([[3], [6, 30], [60, 200]]);
    // With a historical covariate the table path runs instead of the streamed one.
    const tabled = await prepare(input({ ...columns, i0: 'historical' }), named);
    expect(tabled.series.map((s) => [...s.targets.map((t) => Array.from(t)), Array.from(s.covariates[0])])).toEqual([
      [[3], [20], [2.5]],
      [
        [6, 30],
        [60, 200],
        [7, 16],
      ],
    ]);
  });
});

describe('gaps are filled by the impute rule', () => {
  // Days 1..5 with days 2 and 3 missing (day 3 as a NaN row, which counts as missing).
  const gappy = `SELECT DATE '2024-01-01' + d::INTEGER AS ts, v, v AS c, v AS z, v AS f, v AS l FROM (VALUES (0, 1.0), (2, 'NaN'::DOUBLE), (3, 7.0), (4, 9.0)) t(d, v)`;
  test("const, zero, forward fill and linear give the rule's value in the gap", async () => {
    const data = await prepare(
      input({
        ts: { kind: 'time', frequency: '1d' },
        c: { kind: 'target', aggregate: 'sum', impute: { const: 5 } },
        z: { kind: 'target', aggregate: 'sum', impute: 'zero' },
        f: { kind: 'target', aggregate: 'sum', impute: 'forward_fill' },
        l: { kind: 'target', aggregate: 'sum', impute: 'linear' },
      }),
      gappy,
    );
    expect(data.series[0].length).toBe(5);
    expect(data.targets).toEqual(['c', 'z', 'f', 'l']);
    expect(values(data, 0, 0)).toEqual([1, 5, 5, 7, 9]);
    expect(values(data, 0, 1)).toEqual([1, 0, 0, 7, 9]);
    expect(values(data, 0, 2)).toEqual([1, 1, 1, 7, 9]);
    expect(values(data, 0, 3)).toEqual([1, 3, 5, 7, 9]);
  });

  test('without an impute rule the gaps are reported, naming the series and the first gap', async () => {
    const error = await refusal(
      prepare(
        input({ ts: { kind: 'time', frequency: '1d' }, store: 'identifier', v: { kind: 'target', aggregate: 'sum' } }),
        `SELECT ts, 'north' AS store, v FROM (${gappy})`,
      ),
    );
    expect(error.status).toBe(422);
    expect(error.errors).toHaveLength(1);
    expect(error.errors![0].path).toBe('body.query.input.columns.v.impute');
    expect(error.message).toMatch(/store=north \(2 missing step\(s\), the first at 2024-01-02T00:00:00Z\)/);
  });

  test('forward fill before the first value takes the first value', async () => {
    const data = await prepare(
      input({
        ts: { kind: 'time', frequency: '1d' },
        a: { kind: 'target', aggregate: 'sum' },
        b: { kind: 'target', aggregate: 'sum', impute: 'forward_fill' },
      }),
      `SELECT DATE '2024-01-01' + d::INTEGER AS ts, a, b FROM (VALUES (0, 1.0, NULL), (1, 2.0, 4.0), (2, 3.0, NULL)) t(d, a, b)`,
    );
    expect(values(data, 0, 1)).toEqual([4, 4, 4]);
  });
});

describe('hierarchies roll series up, the selector picks levels', () => {
  // Region r1: store a (sku 1, 2), store b (sku 1). Region r2: store c (sku 1). sku 2 of store a starts a day later.
  const retail = `
    SELECT DATE '2024-01-01' + d::INTEGER AS ts, sku, store, region, (d + 1) * base AS sales
    FROM range(4) r(d), (VALUES ('1', 'a', 'r1', 1), ('2', 'a', 'r1', 10), ('1', 'b', 'r1', 100), ('1', 'c', 'r2', 1000)) s(sku, store, region, base)
    WHERE NOT (sku = '2' AND d = 0)`;
  const columns = {
    ts: { kind: 'time', frequency: '1d' },
    sku: 'identifier',
    store: 'identifier',
    region: 'identifier',
    sales: { kind: 'target', aggregate: 'sum' },
  };
  const hierarchies = { sku: [['store', 'region']] };
  const find = (data: PreparedData, ids: (string | null)[]) => data.series.find((s) => JSON.stringify(s.ids) === JSON.stringify(ids))!;

  test('every level: base series, stores, regions; a roll-up equals the sum of its children', async () => {
    const data = await prepare(input(columns, { hierarchies }), retail);
    expect(data.identifiers).toEqual(['sku', 'store', 'region']);
    expect(data.levels.map((l) => l.kept)).toEqual([['sku', 'store', 'region'], ['store', 'region'], ['region']]);
    expect(data.series.map((s) => s.ids)).toEqual([
      ['1', 'a', 'r1'],
      ['1', 'b', 'r1'],
      ['1', 'c', 'r2'],
      ['2', 'a', 'r1'],
      [null, 'a', 'r1'],
      [null, 'b', 'r1'],
      [null, 'c', 'r2'],
      [null, null, 'r1'],
      [null, null, 'r2'],
    ]);
    const v = (ids: (string | null)[]) => Array.from(find(data, ids).targets[0]);
    expect(v(['2', 'a', 'r1'])).toEqual([20, 30, 40]);
    expect(isoTimestamp(find(data, ['2', 'a', 'r1']).start)).toBe('2024-01-02T00:00:00Z');
    // Store a = sku 1 + sku 2, where sku 2 exists.
    expect(v([null, 'a', 'r1'])).toEqual([1, 2 + 20, 3 + 30, 4 + 40]);
    // Region r1 = store a + store b.
    const r1 = v([null, null, 'r1']);
    const [a, b] = [v([null, 'a', 'r1']), v([null, 'b', 'r1'])];
    expect(r1).toEqual(a.map((x, i) => x + b[i]));
    expect(v([null, null, 'r2'])).toEqual([1000, 2000, 3000, 4000]);
  });

  test('a mean target rolls up as the mean of its children', async () => {
    const data = await prepare(input({ ...columns, sales: { kind: 'target', aggregate: 'mean' } }, { hierarchies }), retail);
    expect(Array.from(find(data, [null, 'a', 'r1']).targets[0])).toEqual([1, (2 + 20) / 2, (3 + 30) / 2, (4 + 40) / 2]);
  });

  test('selector: stores of region r1 only ("any" keeps, null aggregates away, a value filters)', async () => {
    const data = await prepare({ ...input(columns, { hierarchies }), selector: { region: 'r1', store: 'any', sku: null } }, retail);
    expect(data.levels.map((l) => l.kept)).toEqual([['store', 'region']]);
    expect(data.series.map((s) => s.ids)).toEqual([
      [null, 'a', 'r1'],
      [null, 'b', 'r1'],
    ]);
  });

  test('a selector that matches no level is refused, listing the levels', async () => {
    const error = await refusal(prepare({ ...input(columns, { hierarchies }), selector: { region: null } }, retail));
    expect(error.errors![0].path).toBe('body.query.selector');
    expect(error.message).toMatch(/\{sku, store, region\}, \{store, region\}, \{region\}/);
  });

  test('two hierarchies combine: product (sku -> category) by location (store -> region)', async () => {
    const data = await prepare(
      input({ ...columns, category: 'identifier' }, { hierarchies: { sku: [['category']], store: [['region']] } }),
      `SELECT *, CASE WHEN sku = '1' THEN 'food' ELSE 'toys' END AS category FROM (${retail})`,
    );
    expect(data.levels.map((l) => l.kept)).toEqual([
      ['sku', 'store', 'region', 'category'],
      ['sku', 'region', 'category'],
      ['store', 'region', 'category'],
      ['region', 'category'],
    ]);
    const food = find(data, [null, null, 'r1', 'food']);
    expect(Array.from(food.targets[0])).toEqual([101, 202, 303, 404]);
  });
});

describe('covariates with their own schema, joined on base/attached pairs', () => {
  const base = `SELECT DATE '2024-01-30' + d::INTEGER AS ts, s AS store, 1.0 AS sales, d * 1.0 AS promo FROM range(4) r(d), (VALUES ('a'), ('b')) t(s)`;
  const baseColumns = { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sales: { kind: 'target', aggregate: 'sum' }, promo: 'historical' };
  const covariate = (columns: Record<string, unknown>, on: { base: string; attached: string }[], part: number) => ({
    schema: { version: '0.3', source: { uri: `inline://cov${part}` }, columns },
    on,
  });

  test('daily per store, monthly without store, and a static per-store value', async () => {
    const data = await prepare(
      {
        ...input(baseColumns),
        covariates: [
          covariate(
            { day: { kind: 'time', frequency: '1h' }, store_id: 'identifier', temp: 'historical' },
            [
              { base: 'ts', attached: 'day' },
              { base: 'store', attached: 'store_id' },
            ],
            0,
          ),
          covariate({ month: { kind: 'time', frequency: '1mo' }, price: 'historical' }, [{ base: 'ts', attached: 'month' }], 1),
          covariate({ shop: 'identifier', size: 'historical' }, [{ base: 'store', attached: 'shop' }], 2),
        ],
      },
      base,
      [
        // Hourly temperatures at 06:00 and 18:00: the daily value is their mean.
        `SELECT TIMESTAMP '2024-01-30 06:00' + INTERVAL (d) DAY + INTERVAL (h) HOUR AS day, s AS store_id, d * 10.0 + h / 6 + (s = 'b')::INT * 100 AS temp
         FROM range(3) r(d), (VALUES (0), (12)) hh(h), (VALUES ('a'), ('b')) t(s)`,
        `SELECT * FROM (VALUES (DATE '2024-01-01', 5.0), (DATE '2024-02-01', 6.0)) t(month, price)`,
        `SELECT * FROM (VALUES ('a', 40.0), ('b', 90.0)) t(shop, size)`,
      ],
    );
    expect(data.covariates).toEqual(['promo', 'temp', 'price', 'size']);
    const [a, b] = data.series;
    expect(a.ids).toEqual(['a']);
    const col = (s: typeof a, j: number) => Array.from(s.covariates[j]);
    expect(col(a, 0)).toEqual([0, 1, 2, 3]);
    // Days 30, 31, 1 have temperatures (mean of 06:00 and 18:00); 2 February has none.
    expect(col(a, 1)).toEqual([1, 11, 21, NaN]);
    expect(col(b, 1)).toEqual([101, 111, 121, NaN]);
    expect(col(a, 2)).toEqual([5, 5, 6, 6]);
    expect(col(a, 3)).toEqual([40, 40, 40, 40]);
    expect(col(b, 3)).toEqual([90, 90, 90, 90]);
  });

  test('a join on a column that is neither time nor identifier is refused at validation', () => {
    expect(() =>
      parseOr422(
        BetaQuery,
        {
          prediction_length: '1d',
          ...input(baseColumns),
          covariates: [covariate({ shop: 'identifier', size: 'historical' }, [{ base: 'sales', attached: 'shop' }], 0)],
        },
        'body.query',
      ),
    ).toThrow(HttpError);
  });
});

describe('large inputs are aggregated in several passes, with the same result', () => {
  // 300 series x 1000 hours, every hour twice (600,000 rows: three passes); series s has value s + hour.
  const big = `SELECT 's' || s AS id, TIMESTAMP '2024-01-01' + INTERVAL (h) HOUR + INTERVAL (m * 20) MINUTE AS ts, (s + h) / 2.0 AS v
               FROM range(300) a(s), range(1000) b(h), range(2) c(m)`;
  const columns = { ts: { kind: 'time', frequency: '1h' }, id: 'identifier', v: { kind: 'target', aggregate: 'sum', impute: 'zero' } };
  const check = (data: PreparedData, gapAt?: number) => {
    expect(data.series).toHaveLength(300);
    const s7 = data.series.find((s) => s.ids[0] === 's7')!;
    expect(s7.length).toBe(1000);
    expect(Array.from(s7.targets[0]).slice(0, 3)).toEqual([7, 8, 9]);
    const s250 = data.series.find((s) => s.ids[0] === 's250')!;
    expect(s250.targets[0][999]).toBe(250 + 999);
    if (gapAt !== undefined) expect(s250.targets[0][gapAt]).toBe(0);
  };

  test('complete series, streamed straight into arrays', async () => {
    check(await prepare(input(columns), big));
  });

  test('with a gap, through the tables that fill it', async () => {
    check(
      await prepare(input(columns), `SELECT * FROM (${big}) WHERE NOT (id = 's250' AND ts >= TIMESTAMP '2024-01-02' AND ts < TIMESTAMP '2024-01-02 01:00')`),
      24,
    );
  });
});
