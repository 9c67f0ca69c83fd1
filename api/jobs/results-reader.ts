import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { metricsDir, predictionsDir, quantileColumn, resultsDir, type JobMeta } from '../../engine/jobs/layout.ts';
import type { Prediction } from '../../engine/predictions.ts';
import { quantileKey } from '../../engine/quantile-key.ts';

let database: Promise<DuckDBInstance> | undefined;
const db = () => (database ??= DuckDBInstance.create(':memory:'));

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** Series are read this many at a time, so a large job never sits in memory whole. */
const SERIES_PER_READ = 200;

async function withConnection<T>(work: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const connection = await (await db()).connect();
  try {
    return await work(connection);
  } finally {
    connection.closeSync();
  }
}

/** Predictions of series [from, to): `series[i][j]` in the synchronous response's shape. */
async function readSeriesRange(dataDir: string, meta: JobMeta, from: number, to: number): Promise<Prediction[][]> {
  const keys = meta.quantiles.map(quantileKey);
  const out: Prediction[][] = Array.from({ length: to - from }, () => []);
  if (!fs.existsSync(predictionsDir(dataDir, meta.job_id))) return out;
  await withConnection(async (c) => {
    const range = `WHERE series_index >= ${from} AND series_index < ${to}`;
    const predictions = await c.runAndReadAll(
      `SELECT series_index, fcd_index, "timestamp", mean${keys.map((k) => `, ${quantileColumn(k)}`).join('')}
       FROM read_parquet(${sqlString(path.join(predictionsDir(dataDir, meta.job_id), '*.parquet'))}) ${range} ORDER BY series_index, fcd_index, step`,
    );
    for (const row of predictions.getRows()) {
      const [series, fcd, timestamp, mean, ...quantiles] = row as [number, number, string, number, ...number[]];
      const entry = (out[series - from][fcd] ??= {
        prediction: { mean: [], ...Object.fromEntries(keys.map((k) => [k, [] as number[]])) },
        index: [],
        metrics: null,
      });
      entry.index.push(timestamp);
      entry.prediction.mean.push(mean);
      keys.forEach((k, q) => entry.prediction[k].push(quantiles[q]));
    }
    const metrics = await c.runAndReadAll(
      `SELECT series_index, fcd_index, known_steps, mae, mape, crps, wape, scaled_bias
       FROM read_parquet(${sqlString(path.join(metricsDir(dataDir, meta.job_id), '*.parquet'))}) ${range}`,
    );
    for (const [series, fcd, known, mae, mape, crps, wape, scaled_bias] of metrics.getRows() as [number, number, number, ...(number | null)[]][]) {
      const entry = out[series - from][fcd];
      if (entry && known > 0) entry.metrics = { mae, mape, crps, wape, scaled_bias };
    }
  });
  return out;
}

/**
 * The completed job's body as a stream of JSON text: series are read from Parquet a block at a
 * time and written as they come, so the body is never built as one string.
 */
export async function* completedJobBody(dataDir: string, meta: JobMeta, page: { offset: number; limit: number | null }): AsyncGenerator<string> {
  const from = Math.min(page.offset, meta.series);
  const to = page.limit === null ? meta.series : Math.min(meta.series, from + page.limit);
  yield `{"job_id":${JSON.stringify(meta.job_id)},"status":"completed","total_series":${meta.series},"offset":${from},"limit":${page.limit ?? 'null'},"series":[`;
  for (let start = from; start < to; start += SERIES_PER_READ) {
    const block = await readSeriesRange(dataDir, meta, start, Math.min(to, start + SERIES_PER_READ));
    yield block.map((s, i) => (start + i > from ? ',' : '') + JSON.stringify(s)).join('');
  }
  yield ']}';
}

/** A job's results merged into one Parquet file (made once, then reused), for download. */
export async function exportParquet(dataDir: string, jobId: string, table: 'predictions' | 'metrics'): Promise<string | null> {
  const parts = table === 'predictions' ? predictionsDir(dataDir, jobId) : metricsDir(dataDir, jobId);
  if (!fs.existsSync(parts)) return null;
  const file = path.join(resultsDir(dataDir, jobId), 'export', `${table}.parquet`);
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  const order = table === 'predictions' ? 'series_index, fcd_index, step' : 'series_index, fcd_index';
  await withConnection((c) =>
    c.run(`COPY (SELECT * FROM read_parquet(${sqlString(path.join(parts, '*.parquet'))}) ORDER BY ${order}) TO ${sqlString(tmp)} (FORMAT parquet)`),
  );
  fs.renameSync(tmp, file);
  return file;
}
