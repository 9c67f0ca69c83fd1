import path from 'node:path';
import { expect, test } from 'vitest';
import { prepareSeries, type PreparedData } from '../../engine/beta/prepare.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../../engine/beta/resolved-query.ts';
import { parquetSource } from '../../engine/beta/table-sources.ts';
import { withConnection } from '../../engine/sql.ts';
import { exactSum, ulp } from './exact-sum.ts';
import { betaTestDatabase, tempDir } from './helpers.ts';

/**
 * The rows of one grid step combine in no particular order (decision 065): fractional hourly
 * rows bucketed into days, with one thread or four, from files in time order or shuffled in
 * small row groups, give the same bits, for sum and mean targets, a historical covariate and an
 * hourly covariate source averaged into days; each daily sum is the exact sum of its hours to
 * the last place. With DuckDB's plain sum() and avg() these runs differed in the last bits.
 */

const dir = tempDir('beta-bucket-sums-');
const db = betaTestDatabase(dir);

const SKUS = 40;
const DAYS = 21;
// Units in thousandths, prices in sevenths (no finite binary fraction), temperatures of both signs and a ten-millionth's size.
const ROWS = `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (h) HOUR AS ts, 'k' || b AS sku,
         (hash(b * 7919 + h) % 1000000)::DOUBLE / 1000 AS units, (hash(b + h * 31) % 100000)::DOUBLE / 7 AS price,
         sin(b + h / 3) * 1e-7 AS temperature
  FROM range(${SKUS}) t(b), range(${DAYS * 24}) r(h)`;
const WEATHER = `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (h) HOUR AS hour, 'k' || b AS sku_id, cos(b + h / 5) * 17.3 AS weather
  FROM range(${SKUS}) t(b), range(${DAYS * 24}) r(h)`;

const columns = {
  ts: { kind: 'time', frequency: '1d' },
  sku: 'identifier',
  units: { kind: 'target', aggregate: 'sum' },
  price: { kind: 'target', aggregate: 'mean' },
};
/** Targets only: complete series, streamed from the aggregation into arrays. */
const targetsOnly = resolveBetaQuery(BetaQuery.parse({ input: { source: { uri: 'inline://sales' }, columns }, prediction_length: '7d' }));
/** With covariates: the bucket table, and the covariate source's own aggregation joined to it. */
const withCovariates = resolveBetaQuery(
  BetaQuery.parse({
    input: { source: { uri: 'inline://sales' }, columns: { ...columns, temperature: 'historical' } },
    covariates: [
      {
        schema: {
          version: '0.3',
          source: { uri: 'inline://weather' },
          columns: { hour: { kind: 'time', frequency: '1h' }, sku_id: 'identifier', weather: 'historical' },
        },
        on: [
          { base: 'ts', attached: 'hour' },
          { base: 'sku', attached: 'sku_id' },
        ],
      },
    ],
    prediction_length: '7d',
  }),
);

interface Files {
  sales: string;
  weather: string;
}

/** The uploads in time order, or shuffled into small row groups so that several threads scan each file. */
async function write(name: string, shuffled: boolean): Promise<Files> {
  const files = { sales: path.join(dir, `${name}-sales.parquet`), weather: path.join(dir, `${name}-weather.parquet`) };
  await withConnection(db(), async (c) => {
    for (const [file, sql, time, id] of [
      [files.sales, ROWS, 'ts', 'sku'],
      [files.weather, WEATHER, 'hour', 'sku_id'],
    ]) {
      const order = shuffled ? `hash(${id} || ${time}::VARCHAR)` : `${time}, ${id}`;
      await c.run(`COPY (${sql} ORDER BY ${order}) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE ${shuffled ? 512 : 122880})`);
    }
  });
  return files;
}

async function prepare(query: typeof targetsOnly, files: Files, threads: number): Promise<PreparedData> {
  return withConnection(db(), async (c) => {
    await c.run(`SET threads = ${threads}`);
    return prepareSeries(c, query, {
      input: parquetSource("part 'sales'", { root: 'upload', path: ['sales'] }, [files.sales]),
      covariates: query.parsed.covariates ? [parquetSource("part 'weather'", { root: 'upload', path: ['weather'] }, [files.weather])] : [],
    });
  });
}

/** Every value of every series, as the bits of its doubles. */
const bits = (data: PreparedData) =>
  data.series.map((s) => ({
    ids: s.ids,
    values: [...s.targets, ...s.covariates].map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')),
  }));

/** The hourly values of each (sku, day), read back from the in-order file. */
async function hoursByDay(file: string, sql: string, id: string, values: string[]): Promise<Map<string, number[][]>> {
  const rows = await withConnection(db(), async (c) =>
    (
      await c.runAndReadAll(
        `SELECT ${id}, CAST(date_diff('day', TIMESTAMP '2024-01-01', ${sql}) AS INTEGER), ${values.join(', ')} FROM read_parquet('${file}') ORDER BY ALL`,
      )
    ).getRowsJS(),
  );
  const groups = new Map<string, number[][]>();
  for (const [sku, day, ...xs] of rows as [string, number, ...number[]][]) {
    const key = `${sku} ${day}`;
    if (!groups.has(key))
      groups.set(
        key,
        values.map(() => []),
      );
    xs.forEach((x, j) => groups.get(key)![j].push(x));
  }
  return groups;
}

/** A sum within a unit in the last place of the exact one: only the exact total's conversion back rounds. */
const expectSum = (got: number, hours: number[]) => expect(Math.abs(got - exactSum(hours))).toBeLessThanOrEqual(ulp(exactSum(hours)));
/** A mean: that sum, divided once, so within two units of the exact mean's last place. */
const expectMean = (got: number, hours: number[]) => {
  const mean = exactSum(hours) / hours.length;
  expect(Math.abs(got - mean)).toBeLessThanOrEqual(2 * ulp(mean));
};

test('hourly rows bucketed into days give the same bits whatever the threads and row order, and their sums are exact', async () => {
  const inOrder = await write('in-order', false);
  const shuffled = await write('shuffled', true);
  const sales = await hoursByDay(inOrder.sales, 'ts', 'sku', ['units', 'price', 'temperature']);
  const weather = await hoursByDay(inOrder.weather, 'hour', 'sku_id', ['weather']);

  for (const query of [targetsOnly, withCovariates]) {
    const runs = [await prepare(query, inOrder, 1), await prepare(query, inOrder, 4), await prepare(query, shuffled, 4), await prepare(query, shuffled, 1)];
    const [data] = runs;
    expect(data.series).toHaveLength(SKUS);
    for (const run of runs.slice(1)) expect(bits(run)).toEqual(bits(data));

    for (const s of data.series) {
      expect(s.length).toBe(DAYS);
      for (let day = 0; day < DAYS; day++) {
        const [units, price, temperature] = sales.get(`${s.ids[0]} ${day}`)!;
        expect(units).toHaveLength(24);
        expectSum(s.targets[0][day], units);
        expectMean(s.targets[1][day], price);
        if (query === withCovariates) {
          expectMean(s.covariates[0][day], temperature);
          expectMean(s.covariates[1][day], weather.get(`${s.ids[0]} ${day}`)![0]);
        }
      }
    }
  }
});
