import type { DuckDBConnection } from '@duckdb/node-api';
import { valueExpression } from './columns.ts';
import type { Duration } from './duration.ts';
import { exactMean, exactSum, sumScales, type SumScale } from './exact-sums.ts';
import { sqlIdent } from '../sql.ts';
import { stepIndexSql, stepTime, type TargetSpec } from './grid-sql.ts';
import type { Level } from './hierarchy.ts';
import type { Aggregate } from './query-fields.ts';

/**
 * Rows onto the frequency grid: each row is numbered by its series (a join with the small
 * `beta_ids` dictionary, which also drops rows the selector filtered out) and its step k, and the
 * rows of one (series, step) are combined by the target's aggregate.
 *
 * A hash aggregate needs far more memory per (series, step) than the data's own size, so large
 * inputs are aggregated a slice of the series at a time (`batches` passes over the input, series
 * whose sid % batches = i in pass i).
 */

export interface BucketSpec {
  ids: { name: string; column: string }[];
  targets: (TargetSpec & { aggregate: Aggregate })[];
  historical: { name: string; column: string }[];
  /** SQL expression of the row's UTC TIMESTAMP, its column qualified by `beta_input` (the grouping joins `beta_ids`). */
  time: string;
  /**
   * The `beta_input` column of a row's place in the upload (`TableSource.attach`), where a target
   * is `first` or `last`; null otherwise, so that the other aggregates never read it.
   */
  position: string | null;
  freq: Duration;
  batches: number;
  /** Scales of the columns a step adds up (`bucketScales`), by column. */
  scales: Map<string, SumScale>;
}

/**
 * Input rows per pass (about the (series, step) pairs one hash table holds), and the most passes:
 * each pass scans the whole input, so past 16 passes the hash tables grow instead (their share
 * of memory then shrinks as the input grows: BENCHMARKS.md, "`beta`: M4 Hourly uploaded as one
 * Parquet file").
 */
const ROWS_PER_PASS = 262_144;
const MAX_PASSES = 16;

export const passesFor = (rows: number, series: number): number => Math.max(1, Math.min(MAX_PASSES, Math.ceil(rows / ROWS_PER_PASS), series));

/**
 * Within one step: how rows combine. Sums and means add the step's rows exactly (exact-sums.ts):
 * a parallel aggregate adds them in its threads' order, so hourly rows bucketed into days would
 * otherwise differ in the last bits from run to run, and a job from the synchronous answer.
 *
 * `first` and `last` order the rows by `__o`, their time and then their place in the upload
 * (decision 068): by time alone, arg_min and arg_max keep whichever of two rows at the same time
 * a thread met first, so duplicates gave different answers from run to run.
 */
const BUCKET: Record<Aggregate, (v: string, scale: SumScale) => string> = {
  sum: exactSum,
  mean: exactMean,
  min: (v) => `min(${v})`,
  max: (v) => `max(${v})`,
  median: (v) => `median(${v})`,
  first: (v) => `arg_min(${v}, __o) FILTER (WHERE ${v} IS NOT NULL)`,
  last: (v) => `arg_max(${v}, __o) FILTER (WHERE ${v} IS NOT NULL)`,
  count: (v) => `count(${v})`,
};

export const ORDERED = new Set<Aggregate>(['first', 'last']);

/**
 * A row's order within its step as one HUGEINT: its time in microseconds above its BIGINT
 * position, which is never negative. One key compares as cheaply as arg_min's own types, where a
 * STRUCT of the two goes through DuckDB's generic sort keys.
 */
const orderKey = (time: string, position: string) => `CAST(epoch_us(${time}) AS HUGEINT) * ${2n ** 63n} + beta_input.${sqlIdent(position)}`;

const ADDS = new Set<Aggregate>(['sum', 'mean']);

/**
 * The scales of the columns a step adds up: sum and mean targets, historical covariates. A step
 * holds at most all of the input's rows, which the scales' query counts (from a Parquet footer,
 * like the columns' extremes): the largest step's own count would allow a finer scale, but needs
 * a grouping by (series, step), as costly as the bucketing itself, while the input's count costs
 * only its logarithm in bits of the range kept exactly. Rows the selector drops only loosen it.
 */
export async function bucketScales(c: DuckDBConnection, spec: Omit<BucketSpec, 'scales'>): Promise<Map<string, SumScale>> {
  const added = [...spec.targets.filter((t) => ADDS.has(t.aggregate)), ...spec.historical];
  const scales = await sumScales(
    c,
    'beta_input',
    added.map((v) => sqlIdent(v.name)),
  );
  return new Map(added.map((v) => [v.column, scales.get(sqlIdent(v.name)) ?? null]));
}

/** Columns of a bucket table: sid, k, the targets, the historical covariates. */
export const bucketColumns = (spec: BucketSpec): string[] => [...spec.targets.map((t) => t.column), ...spec.historical.map((h) => h.column)];

/** One pass of the aggregation: (sid, k, targets..., historical...). */
export function bucketQuery(spec: BucketSpec, pass: number): string {
  const numbered = [
    spec.ids.length ? 'd.sid' : '0 AS sid',
    `${stepIndexSql(spec.time, spec.freq)} AS k`,
    ...(spec.position ? [`${orderKey(spec.time, spec.position)} AS __o`] : []),
    ...spec.targets.map((t) => `${valueExpression(t.name, 'beta_input')} AS __${t.column}`),
    ...spec.historical.map((h) => `${valueExpression(h.name, 'beta_input')} AS __${h.column}`),
  ];
  const join = spec.ids.length
    ? `JOIN beta_ids d ON ${spec.ids.map((id) => `CAST(beta_input.${sqlIdent(id.name)} AS VARCHAR) = d.${id.column}`).join(' AND ')}`
    : '';
  const slice = spec.batches > 1 ? `WHERE d.sid % ${spec.batches} = ${pass}` : '';
  const combined = [
    ...spec.targets.map((t) => `CAST(${BUCKET[t.aggregate](`__${t.column}`, spec.scales.get(t.column) ?? null)} AS DOUBLE) AS ${t.column}`),
    ...spec.historical.map((h) => `${exactMean(`__${h.column}`, spec.scales.get(h.column) ?? null)} AS ${h.column}`),
  ];
  return `SELECT sid, k, ${combined.join(', ')} FROM (SELECT ${numbered.join(', ')} FROM beta_input ${join} ${slice}) GROUP BY sid, k`;
}

/** The aggregation into the table `beta_bucketed`, pass by pass. */
export async function bucketIntoTable(c: DuckDBConnection, spec: BucketSpec): Promise<void> {
  await c.run(
    `CREATE TEMP TABLE beta_bucketed (sid INTEGER, k BIGINT${bucketColumns(spec)
      .map((v) => `, ${v} DOUBLE`)
      .join('')})`,
  );
  for (let pass = 0; pass < spec.batches; pass++) await c.run(`INSERT INTO beta_bucketed ${bucketQuery(spec, pass)}`);
}

/** A prepared series as the readers build it (prepare.ts re-exports the type). */
export interface SeriesArrays {
  level: Level;
  ids: (string | null)[];
  start: number;
  length: number;
  targets: Float64Array[];
  covariates: Float64Array[];
}

/**
 * The common case in one streaming pass and no table: base series only, no covariates, and every
 * step of every series observed. The aggregation's rows go straight into typed arrays; if any
 * step turns out missing (a gap to impute or report), null is returned and the caller takes the
 * table path, which fills and checks gaps in SQL.
 */
export async function streamCompleteSeries(
  c: DuckDBConnection,
  spec: BucketSpec,
  dictionary: Map<number, (string | null)[]>,
  level: Level,
): Promise<SeriesArrays[] | null> {
  const join = spec.ids.length
    ? `JOIN beta_ids d ON ${spec.ids.map((id) => `CAST(beta_input.${sqlIdent(id.name)} AS VARCHAR) = d.${id.column}`).join(' AND ')}`
    : '';
  const spans = (
    await c.runAndReadAll(
      `SELECT sid, CAST(min(k) AS DOUBLE), CAST(max(k) AS DOUBLE) FROM (SELECT ${spec.ids.length ? 'd.sid' : '0 AS sid'}, ${stepIndexSql(spec.time, spec.freq)} AS k FROM beta_input ${join}) GROUP BY sid ORDER BY sid`,
    )
  ).getRowsJS() as number[][];
  const bySid = new Map<number, { series: SeriesArrays; k0: number; filled: number }>();
  const series = spans.map(([sid, k0, k1]) => {
    const length = k1 - k0 + 1;
    const s: SeriesArrays = {
      level,
      ids: dictionary.get(sid)!,
      start: stepTime(k0, spec.freq),
      length,
      targets: spec.targets.map(() => new Float64Array(length).fill(NaN)),
      covariates: [],
    };
    bySid.set(sid, { series: s, k0, filled: 0 });
    return s;
  });
  for (let pass = 0; pass < spec.batches; pass++) {
    const result = await c.stream(`SELECT sid, CAST(k AS DOUBLE), ${spec.targets.map((t) => t.column).join(', ')} FROM (${bucketQuery(spec, pass)})`);
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const vectors = Array.from({ length: chunk.columnCount }, (_, j) => chunk.getColumnVector(j));
      for (let r = 0; r < chunk.rowCount; r++) {
        const entry = bySid.get(vectors[0].getItem(r) as number)!;
        const at = (vectors[1].getItem(r) as number) - entry.k0;
        for (let j = 0; j < spec.targets.length; j++) entry.series.targets[j][at] = (vectors[2 + j].getItem(r) as number | null) ?? NaN;
        entry.filled++;
      }
    }
  }
  for (const { series: s, filled } of bySid.values()) {
    if (filled < s.length || s.targets.some((values) => values.some(Number.isNaN))) return null;
  }
  return series;
}
