import { sqlString } from '../engine/sql.ts';
import type { StoreDatabase } from './store-database.ts';
import { METRIC_NAMES, quantileColumn } from './results.ts';

/**
 * Read-only summaries of a job's result parts for the dashboard, computed by DuckDB where the
 * Parquet lives (a local folder or a bucket): a model's accuracy pooled over every scored step,
 * and pages of the per-forecast metrics table.
 */

export type MetricName = (typeof METRIC_NAMES)[number];

/** One model's accuracy over all the steps of a job whose actual value is known. */
export type AccuracyRow = { model: string; target: string | null; scored_steps: number } & Record<MetricName, number | null>;

/** A JSON-safe cell: timestamps become ISO 8601 strings (UTC), non-finite numbers null. */
export type Cell = string | number | boolean | null;

const finiteOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * The stable API's metrics (docs/operations.md, "Metrics"), with T = every scored step of the job: pooled,
 * not an average of per-forecast values, so a long series weighs by its steps. CRPS is the
 * quantile-loss approximation over the job's quantile levels; null without levels.
 */
function accuracySql(glob: string, levels: readonly number[], byTarget: boolean): string {
  const pinball = levels.map((tau) => {
    const q = quantileColumn(tau);
    return `(actual - ${q}) * (${tau} - CASE WHEN actual < ${q} THEN 1 ELSE 0 END)`;
  });
  const crps = pinball.length === 0 ? 'NULL' : `avg((2.0 / ${pinball.length}) * (${pinball.join(' + ')}))`;
  return `
    SELECT model, ${byTarget ? 'target' : 'NULL::VARCHAR AS target'}, count(*)::INTEGER AS scored_steps,
      avg(abs(actual - mean)) AS mae,
      CASE WHEN bool_or(actual = 0) THEN NULL ELSE avg(abs(actual - mean) / abs(actual)) END AS mape,
      ${crps} AS crps,
      sum(abs(actual - mean)) / nullif(sum(abs(actual)), 0) AS wape,
      sum(mean - actual) / nullif(sum(abs(actual)), 0) AS scaled_bias
    FROM read_parquet(${sqlString(glob)})
    WHERE actual IS NOT NULL AND NOT isnan(mean)
    GROUP BY ALL ORDER BY ALL`;
}

/** Pooled accuracy of the parts a glob matches, one row per model (and target, for beta jobs). */
export function accuracy(db: StoreDatabase, glob: string, levels: readonly number[], byTarget: boolean): Promise<AccuracyRow[]> {
  return db.use(async (c) => {
    const rows = (await c.runAndReadAll(accuracySql(glob, levels, byTarget))).getRowObjectsJS();
    return rows.map((r) => ({
      model: String(r.model),
      target: r.target == null ? null : String(r.target),
      scored_steps: Number(r.scored_steps),
      ...(Object.fromEntries(METRIC_NAMES.map((m) => [m, finiteOrNull(r[m])])) as Record<MetricName, number | null>),
    }));
  });
}

const cell = (value: unknown): Cell => {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number') return finiteOrNull(value);
  if (typeof value === 'boolean' || typeof value === 'string') return value;
  return String(value);
};

/** A page of the rows the glob matches, in `order`, with the total and the column names. */
export function rowsPage(
  db: StoreDatabase,
  glob: string,
  order: string,
  page: { offset: number; limit: number; where?: string },
): Promise<{ total: number; columns: string[]; rows: Record<string, Cell>[] }> {
  const where = page.where ? `WHERE ${page.where}` : '';
  return db.use(async (c) => {
    const total = Number((await c.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlString(glob)}) ${where}`)).getRowObjects()[0].n);
    const reader = await c.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(glob)}) ${where} ORDER BY ${order} LIMIT ${page.limit} OFFSET ${page.offset}`);
    const columns = reader.columnNames();
    const rows = reader.getRowObjectsJS().map((r) => Object.fromEntries(columns.map((name) => [name, cell(r[name])])));
    return { total, columns, rows };
  });
}
