import fs from 'node:fs';
import path from 'node:path';
import {
  Float64,
  makeVector,
  Table,
  tableToIPC,
  TimestampMicrosecond,
  TimestampNanosecond,
  TimestampSecond,
  TimestampMillisecond,
  Uint64,
  vectorFromArray,
} from 'apache-arrow';
import { expect, test } from 'vitest';
import { arrowSource } from '../../engine/beta/arrow-source.ts';
import { isoTimestamp } from '../../engine/beta/duration.ts';
import { prepareSeries, type PreparedData } from '../../engine/beta/prepare.ts';
import { BetaQuery } from '../../engine/beta/query-schema.ts';
import { resolveBetaQuery } from '../../engine/beta/resolved-query.ts';
import { parquetSource, type TableSource } from '../../engine/beta/table-sources.ts';
import { withConnection } from '../../engine/sql.ts';
import { betaTestDatabase, tempDir, writeParquet } from './helpers.ts';

/**
 * Arrow values read as exactly as Parquet's: timestamps from their 64-bit integers (as
 * apache-arrow's float milliseconds, a nanosecond time just before midnight rounded into the next
 * day, where the same Parquet stays), unsigned 64-bit integers past 2^63 as numbers.
 */

const dir = tempDir('beta-arrow-times-');
const db = betaTestDatabase(dir);

const DAY_NS = 86_400_000_000_000n;
/** Days -1 to 2 around 2024-01-01: a row at each day's start and one 1 ns before its end. */
const START_NS = 1_704_067_200_000_000_000n;
const days = [-1n, 0n, 1n, 2n];
const times = (origin: bigint) => days.flatMap((d) => [origin + d * DAY_NS, origin + (d + 1n) * DAY_NS - 1n]);
const values = days.flatMap((d) => [10 * Number(d + 2n), Number(d + 2n)]);

const query = resolveBetaQuery(
  BetaQuery.parse({
    input: { source: { uri: 'inline://sales' }, columns: { ts: { kind: 'time', frequency: '1d' }, v: { kind: 'target', aggregate: 'sum' } } },
    prediction_length: '1d',
  }),
);

const prepare = (input: TableSource): Promise<PreparedData> => withConnection(db(), (c) => prepareSeries(c, query, { input, covariates: [] }));

function arrowFile(name: string, ts: ReturnType<typeof makeVector>, v: ReturnType<typeof makeVector> = vectorFromArray(values, new Float64())): TableSource {
  const file = path.join(dir, name);
  fs.writeFileSync(file, tableToIPC(new Table({ ts, v }), 'file'));
  return arrowSource("part 'sales'", { root: 'upload', path: ['sales'] }, file);
}

test('nanosecond times stay in their day, in Arrow as in Parquet', async () => {
  const ns = times(START_NS);
  const fromArrow = await prepare(arrowFile('ns.arrow', makeVector({ type: new TimestampNanosecond(), data: BigInt64Array.from(ns) })));
  const rows = ns.map((t, i) => `(make_timestamp_ns(${t}), ${values[i]})`).join(', ');
  const file = await writeParquet(path.join(dir, 'ns.parquet'), `SELECT * FROM (VALUES ${rows}) t(ts, v)`);
  const fromParquet = await prepare(parquetSource("part 'sales'", { root: 'upload', path: ['sales'] }, [file]));
  expect(Array.from(fromArrow.series[0].targets[0])).toEqual([11, 22, 33, 44]);
  expect(isoTimestamp(fromArrow.series[0].start)).toBe('2023-12-31T00:00:00Z');
  expect(fromParquet.series).toEqual(fromArrow.series);
});

test('second and microsecond times keep their exact instant', async () => {
  const micros = times(START_NS).map((t) => (t + 1n) / 1000n - 1n);
  const seconds = times(START_NS).map((t) => (t + 1n) / 1_000_000_000n - 1n);
  const fromMicros = await prepare(arrowFile('us.arrow', makeVector({ type: new TimestampMicrosecond(), data: BigInt64Array.from(micros) })));
  const fromSeconds = await prepare(arrowFile('s.arrow', makeVector({ type: new TimestampSecond(), data: BigInt64Array.from(seconds) })));
  // Each row a unit before its nanosecond: the rows at a day's start fall into the day before.
  expect(Array.from(fromMicros.series[0].targets[0])).toEqual([10, 21, 32, 43, 4]);
  expect(fromSeconds.series).toEqual(fromMicros.series);
});

test('unsigned 64-bit values past 2^63 are read as numbers', async () => {
  const big = 2n ** 63n + 2048n;
  const ts = vectorFromArray([Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 2)], new TimestampMillisecond());
  const data = await prepare(arrowFile('u64.arrow', ts, makeVector({ type: new Uint64(), data: BigUint64Array.from([big, 7n]) })));
  expect(Array.from(data.series[0].targets[0])).toEqual([Number(big), 7]);
});
