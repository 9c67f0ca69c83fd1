import type { DuckDBConnection } from '@duckdb/node-api';
import { sqlNumber } from '../sql.ts';

/**
 * Sums of DOUBLE columns whose bits do not depend on the order DuckDB adds the rows in
 * (decision 065). Floating-point addition is not associative, and a parallel hash aggregate adds
 * a group's rows, and combines its threads' partial sums, in whatever order the threads deliver
 * them: the same data summed twice can differ in the last bit. Integer addition is associative,
 * so each value is scaled by a power of two into a 128-bit integer (HUGEINT), the integers are
 * summed, and the total is converted back to a double once. Roll-ups, the rows of one grid step
 * and a covariate's rows in one step are all added this way.
 *
 * The scale is one per column, from the largest magnitude in it and the most rows one group
 * sums, so that the largest total still fits. A value is scaled without loss unless it is smaller
 * than the column's largest by a factor of more than about 2^(72 - log2(rows per group)); smaller
 * values are rounded to that step. Where nothing is lost, the total is the exact sum, and only
 * its conversion back rounds.
 */

/** A column's scale: sums multiply by 2^scale; null where the column holds only zeros or NULLs. */
export type SumScale = number | null;

/** The largest total a HUGEINT sum may reach, in bits; HUGEINT holds 127 and a sign. */
const TOTAL_BITS = 126;

/**
 * The scales of the numeric `columns` of `table`, for groups of at most `maxRows` rows; without
 * `maxRows`, of at most all the table's rows, counted in the same query. A column may be of any
 * numeric type and hold NaN or infinities: the sums' callers read those as missing (NULL).
 */
export async function sumScales(c: DuckDBConnection, table: string, columns: string[], maxRows?: number): Promise<Map<string, SumScale>> {
  if (columns.length === 0) return new Map();
  // The largest magnitude from min() and max() of the column as it is: DuckDB answers these (and
  // count(*)) from a Parquet file's statistics, without reading its values, and a cast to DOUBLE
  // keeps their order.
  const bounds = columns.map((v) => `CAST(min(${v}) AS DOUBLE), CAST(max(${v}) AS DOUBLE)`);
  const [[rows, ...extremes]] = (await c.runAndReadAll(`SELECT count(*), ${bounds.join(', ')} FROM ${table}`)).getRowsJS() as [bigint, ...(number | null)[]][];
  const largest = columns.map((_, i) => {
    const [low, high] = [extremes[2 * i], extremes[2 * i + 1]];
    return low === null || high === null ? null : Math.max(Math.abs(low), Math.abs(high));
  });
  // NaN or an infinity in a column: its largest finite magnitude takes a scan of its values.
  const unbounded = columns.flatMap((_, i) => (largest[i] === null || Number.isFinite(largest[i]) ? [] : [i]));
  if (unbounded.length > 0) {
    const finite = unbounded.map((i) => `max(abs(CAST(${columns[i]} AS DOUBLE))) FILTER (WHERE isfinite(CAST(${columns[i]} AS DOUBLE)))`);
    const [found] = (await c.runAndReadAll(`SELECT ${finite.join(', ')} FROM ${table}`)).getRowsJS() as (number | null)[][];
    unbounded.forEach((i, j) => (largest[i] = found[j]));
  }
  const rowBits = Math.ceil(Math.log2((maxRows ?? Number(rows)) + 1));
  return new Map(
    columns.map((column, i) => {
      const m = largest[i];
      if (m === null || m === 0) return [column, null];
      // |value| < 2^bits; the extra bit covers Math.log2 rounding at a power of two.
      const bits = Math.floor(Math.log2(m)) + 2;
      return [column, TOTAL_BITS - rowBits - bits];
    }),
  );
}

/**
 * `expression` times 2^power. A column of tiny values needs a power beyond a double's range
 * (2^1023), so it is applied in two factors, each exact.
 */
function timesPowerOfTwo(expression: string, power: number): string {
  const first = Math.max(-1000, Math.min(1000, power));
  const product = `${expression} * ${sqlNumber(2 ** first)}`;
  return first === power ? product : `${product} * ${sqlNumber(2 ** (power - first))}`;
}

/** The scaled sum of `column` as a HUGEINT expression. */
const scaledSum = (column: string, scale: number) => `sum(CAST(${timesPowerOfTwo(column, scale)} AS HUGEINT))`;

/** sum(column) as a DOUBLE that depends only on the group's values. */
export function exactSum(column: string, scale: SumScale): string {
  // Zeros and NULLs only: any order gives the same sum (or NULL).
  if (scale === null) return `sum(${column})`;
  return timesPowerOfTwo(`CAST(${scaledSum(column, scale)} AS DOUBLE)`, -scale);
}

/** avg(column), likewise. */
export function exactMean(column: string, scale: SumScale): string {
  if (scale === null) return `avg(${column})`;
  return `${exactSum(column, scale)} / count(${column})`;
}
