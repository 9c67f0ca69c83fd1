import fs from 'node:fs';
import path from 'node:path';
import { Float64, Table, tableToIPC, TimestampMillisecond, Utf8, vectorFromArray } from 'apache-arrow';
import { beforeAll, expect, test } from 'vitest';
import { arrowSource } from '../../engine/beta/arrow-source.ts';
import { locatorSource } from '../../engine/beta/locator.ts';
import { prepareSeries, type PreparedData } from '../../engine/beta/prepare.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { resolveBetaQuery, type ResolvedBetaQuery } from '../../engine/beta/resolved-query.ts';
import { parquetSource, type TableSource } from '../../engine/beta/table-sources.ts';
import { withConnection } from '../../engine/sql.ts';
import { betaTestDatabase, tempDir } from './helpers.ts';

/**
 * `first` and `last` with rows at the same time (decision 068): `first` is the value at a step's
 * earliest time and, among rows at that time, the one that comes first in the upload (its files
 * in order, then its rows); `last` the latest time's row that comes last. Missing values are
 * skipped. The upload's hourly rows are shuffled into three Parquet files of small row groups, or
 * three Arrow record batches, so that several threads scan them, and the earliest and latest hour
 * of every day hold several rows each. With arg_min and arg_max by time alone, `last` took the
 * tie a thread met first, and `first` varied with the threads.
 */

const dir = tempDir('beta-first-last-');
const db = betaTestDatabase(dir);

const SKUS = 24;
const DAYS = 10;
/** Rows at the first and the last hour of each (sku, day); one row at the other hours. */
const TIES = 6;
const FILES = 3;

/**
 * `ord` is a row's place in the upload, shuffled against time. `a` and `b` tell every row apart;
 * on every third day the first of the tied rows at hour 0 has no `a`, and the last of those at
 * hour 23 no `b`, on another third.
 */
const ROWS = `
  WITH r AS (
    SELECT b, d, h, j, CAST(row_number() OVER (ORDER BY hash(b, d, h, j)) - 1 AS INTEGER) AS ord
    FROM range(${SKUS}) t(b), range(${DAYS}) r(d), range(24) s(h), range(${TIES}) u(j)
    WHERE j = 0 OR h IN (0, 23)
  ), ranked AS (
    SELECT *, row_number() OVER (PARTITION BY b, d, h ORDER BY ord) AS rk, count(*) OVER (PARTITION BY b, d, h) AS n FROM r
  )
  SELECT ord, TIMESTAMP '2024-01-01' + INTERVAL (d * 24 + h) HOUR AS ts, 's' || (b % 4) AS store, 'k' || b AS sku,
         CASE WHEN h = 0 AND rk = 1 AND d % 3 = 0 THEN NULL ELSE CAST(b * 100000 + d * 1000 + h * 10 + j AS DOUBLE) END AS a,
         CASE WHEN h = 23 AND rk = n AND d % 3 = 1 THEN NULL ELSE CAST(b * 100000 + d * 1000 + h * 10 + j + 0.5 AS DOUBLE) END AS b
  FROM ranked`;
const ROW_COUNT = SKUS * DAYS * (24 + 2 * (TIES - 1));

const columns = {
  ts: { kind: 'time', frequency: '1d' },
  store: 'identifier',
  sku: 'identifier',
  a: { kind: 'target', aggregate: 'first' },
  b: { kind: 'target', aggregate: 'last' },
};
/** Base series only: streamed from the aggregation into arrays. */
const base = resolveBetaQuery(BetaQuery.parse({ input: { source: { uri: 'inline://sales' }, columns }, prediction_length: '1d' }));
/** With the stores' roll-up: the bucket table, then the roll-up, where first and last add up. */
const rolledUp = resolveBetaQuery(
  BetaQuery.parse({ input: { source: { uri: 'inline://sales' }, columns, hierarchies: { sku: [['store']] } }, prediction_length: '1d' }),
);

type Row = { ord: number; ts: number; store: string; sku: string; a: number | null; b: number | null };
let rows: Row[];
let parquetFiles: string[];
let shadowedFiles: string[];
let arrowFile: string;

beforeAll(async () => {
  parquetFiles = Array.from({ length: FILES }, (_, i) => path.join(dir, `part-${i}.parquet`));
  shadowedFiles = Array.from({ length: FILES }, (_, i) => path.join(dir, `shadowed-${i}.parquet`));
  await withConnection(db(), async (c) => {
    await c.run(`CREATE TEMP TABLE upload AS ${ROWS}`);
    // Files in upload order, each in its rows' upload order, in small row groups.
    for (const [i, file] of parquetFiles.entries()) {
      const slice = `ord * ${FILES} // ${ROW_COUNT} = ${i}`;
      await c.run(`COPY (SELECT * FROM upload WHERE ${slice} ORDER BY ord) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 256)`);
      // The same with a column of the name DuckDB gives a row's number, counting backwards.
      const shadowing = `SELECT *, -ord AS file_row_number FROM upload WHERE ${slice} ORDER BY ord`;
      await c.run(`COPY (${shadowing}) TO '${shadowedFiles[i]}' (FORMAT parquet, ROW_GROUP_SIZE 256)`);
    }
    const read = await c.runAndReadAll('SELECT ord, CAST(epoch_ms(ts) AS DOUBLE) AS ts, store, sku, a, b FROM upload ORDER BY ord');
    rows = read.getRowObjectsJS() as Row[];
  });
  expect(rows).toHaveLength(ROW_COUNT);
  // The same rows as one Arrow file of three record batches.
  const batch = (part: Row[]) => {
    const column = (key: keyof Row, type: Float64 | TimestampMillisecond | Utf8) =>
      vectorFromArray(
        part.map((r) => r[key]),
        type,
      );
    const types = { ts: new TimestampMillisecond(), store: new Utf8(), sku: new Utf8(), a: new Float64(), b: new Float64() };
    return new Table(Object.fromEntries(Object.entries(types).map(([key, type]) => [key, column(key as keyof Row, type)]))).batches;
  };
  const third = Math.ceil(ROW_COUNT / FILES);
  const batches = Array.from({ length: FILES }, (_, i) => batch(rows.slice(i * third, (i + 1) * third))).flat();
  arrowFile = path.join(dir, 'sales.arrow');
  fs.writeFileSync(arrowFile, tableToIPC(new Table(batches), 'file'));
});

const parquet = () => parquetSource("part 'sales'", { root: 'upload', path: ['sales'] }, parquetFiles);
/** Parquet whose own file_row_number column hides DuckDB's: read in order into a table instead. */
const shadowed = () => parquetSource("part 'sales'", { root: 'upload', path: ['sales'] }, shadowedFiles);
/** A locator's glob: its files in name order, which is their upload order here. */
const locator = () => locatorSource('part-*.parquet', { dataRoot: dir, objectStores: [] }, { root: 'request', path: ['input', 'source'] });
const arrow = () => arrowSource("part 'sales'", { root: 'upload', path: ['sales'] }, arrowFile);

async function prepare(query: ResolvedBetaQuery, input: TableSource, threads: number): Promise<PreparedData> {
  return withConnection(db(), async (c) => {
    await c.run(`SET threads = ${threads}`);
    return prepareSeries(c, query, { input, covariates: [] });
  });
}

/** The documented rule, from the rows in upload order: per sku, each day's first `a` and last `b`. */
function expected(): Map<string, { a: number[]; b: number[] }> {
  const bySku = new Map<string, { a: number[]; b: number[]; aTime: number[]; bTime: number[] }>();
  for (const r of rows) {
    const s = bySku.get(r.sku) ?? { a: [], b: [], aTime: [], bTime: [] };
    bySku.set(r.sku, s);
    const day = Math.floor((r.ts - Date.UTC(2024, 0, 1)) / 86_400_000);
    // In upload order, a present `a` replaces only at an earlier time, a present `b` at the same time or later.
    if (r.a !== null && !(s.aTime[day] <= r.ts)) [s.a[day], s.aTime[day]] = [r.a, r.ts];
    if (r.b !== null && !(s.bTime[day] > r.ts)) [s.b[day], s.bTime[day]] = [r.b, r.ts];
  }
  return new Map([...bySku].map(([sku, s]) => [sku, { a: s.a, b: s.b }]));
}

/** Per sku, its days' `a` and `b`; roll-ups by store. */
const values = (data: PreparedData) => new Map(data.series.map((s) => [s.ids.map((v) => v ?? '*').join('/'), { a: [...s.targets[0]], b: [...s.targets[1]] }]));

test.each([
  ['Parquet', parquet],
  ['a Parquet locator', locator],
  ['Parquet with a file_row_number column', shadowed],
  ['Arrow', arrow],
])('%s: first takes the earliest time and the first row in the upload, last the latest and the last row', async (_, source) => {
  const want = expected();
  expect([...want.values()].every((s) => s.a.length === DAYS && s.b.length === DAYS)).toBe(true);
  const runs = [await prepare(base, source(), 1), ...(await Promise.all([0, 1, 2].map(() => prepare(base, source(), 4))))];
  for (const run of runs) {
    const got = values(run);
    expect(got.size).toBe(SKUS);
    for (const [sku, s] of want) expect(got.get(`s${Number(sku.slice(1)) % 4}/${sku}`)).toEqual(s);
  }
});

test('first and last roll up by sum: a store is the sum of its skus, whatever the threads', async () => {
  const want = expected();
  for (const threads of [1, 4]) {
    const got = values(await prepare(rolledUp, parquet(), threads));
    for (let store = 0; store < 4; store++) {
      const skus = [...want].filter(([sku]) => Number(sku.slice(1)) % 4 === store).map(([, s]) => s);
      const sum = (key: 'a' | 'b') => Array.from({ length: DAYS }, (_, d) => skus.reduce((total, s) => total + s[key][d], 0));
      expect(got.get(`s${store}/*`)).toEqual({ a: sum('a'), b: sum('b') });
    }
  }
});
