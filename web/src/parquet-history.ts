import { parquetReadObjects } from 'hyparquet';
import type { Points } from './chart/model.ts';
import { toMillis } from './time.ts';

/**
 * The history of an uploaded long-format Parquet file (`unique_id`, `ds`, `y`), read in the
 * browser so the playground can chart it before the forecast: the upload itself goes to the beta
 * endpoint, which reads it with DuckDB. Series are keyed by `unique_id` (the beta answer's
 * identifier). Rows whose `ds` or `y` cannot be read are left out of the chart, never the upload.
 */
export async function readParquetHistory(file: File): Promise<Map<string, Points>> {
  const rows = (await parquetReadObjects({ file: await file.arrayBuffer(), columns: ['unique_id', 'ds', 'y'] })) as Record<string, unknown>[];
  const bySeries = new Map<string, [number, number][]>();
  for (const row of rows) {
    const time = instant(row.ds);
    const value = typeof row.y === 'bigint' ? Number(row.y) : row.y;
    if (Number.isNaN(time) || typeof value !== 'number' || !Number.isFinite(value)) continue;
    const name = row.unique_id === undefined || row.unique_id === null ? 'series' : String(row.unique_id);
    const points = bySeries.get(name) ?? [];
    points.push([time, value]);
    bySeries.set(name, points);
  }
  return new Map(
    [...bySeries].map(([name, points]) => {
      points.sort((a, b) => a[0] - b[0]);
      return [name, { x: points.map((p) => p[0]), y: points.map((p) => p[1]) }];
    }),
  );
}

/** A `ds` value as milliseconds: a timestamp or date column (read as a Date), or text as the CSV's. */
function instant(ds: unknown): number {
  if (ds instanceof Date) return ds.getTime();
  if (typeof ds === 'string') return toMillis(ds);
  return NaN;
}
