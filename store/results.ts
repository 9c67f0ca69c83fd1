import { timestampValue, type DuckDBAppender } from '@duckdb/node-api';
import { quantileKey } from '../engine/quantile-key.ts';
import type { InputSerie } from '../engine/request-schema.ts';
import type { Metrics, Prediction } from '../engine/response-schema.ts';
import { sqlString } from '../engine/sql.ts';
import { instantMillis } from '../engine/time-index.ts';
import type { StoreDatabase } from './store-database.ts';
import { partKey, type ResultTable } from './layout.ts';
import type { ObjectStore } from './object-store.ts';

/**
 * A job's results as Parquet: the columns (defined once here, for writing and reading), one chunk's
 * parts written, and the parts read back for polling, counting and export. predictions: one row per
 * forecast step; metrics: one row per (series, forecast creation date); a quantile level's column is
 * `q_0_1` for 0.1. Typed UTC timestamps beside `timestamp_text`, the entry as the API writes it:
 * docs/decisions/024-result-parquet.md.
 */

const IDENTIFYING = ['job_id VARCHAR', 'model VARCHAR', 'series_index INTEGER', 'fcd_index INTEGER', 'fcd INTEGER', 'fcd_timestamp TIMESTAMP'];
export const METRIC_NAMES = ['mae', 'mape', 'crps', 'wape', 'scaled_bias'] as const satisfies readonly (keyof Metrics)[];

export const quantileColumn = (level: number): string => `q_${quantileKey(level).replace('.', '_')}`;

const predictionColumns = (levels: readonly number[]) => [
  ...IDENTIFYING,
  'step INTEGER',
  '"timestamp" TIMESTAMP',
  'timestamp_text VARCHAR',
  'mean DOUBLE',
  ...levels.map((l) => `${quantileColumn(l)} DOUBLE`),
  'actual DOUBLE',
];
// refitted: false where the model kept an earlier date's fit (the request's refit policy).
const METRIC_COLUMNS = [...IDENTIFYING, 'known_steps INTEGER', ...METRIC_NAMES.map((m) => `${m} DOUBLE`), 'refitted BOOLEAN'];

/** The column names a forecast job's results use, besides the quantiles' `q_*`. */
export const FORECAST_RESULT_COLUMNS: readonly string[] = [
  ...new Set([...predictionColumns([]), ...METRIC_COLUMNS].map((definition) => definition.split(' ')[0].replaceAll('"', ''))),
];

/** One forecast of a job, as its results record it. */
export interface ForecastResult {
  /** Position of the series in the job's request, and of the creation date in its `fcds`. */
  seriesIndex: number;
  fcdIndex: number;
  /** The creation date as a history length. */
  fcd: number;
  /** The series as the request gave it: its index names the creation time, its target gives the actuals. */
  serie: InputSerie;
  prediction: Prediction;
}

const num = (a: DuckDBAppender, v: number | null | undefined) => (v == null ? a.appendNull() : a.appendDouble(v));
const time = (a: DuckDBAppender, entry: string) => a.appendTimestamp(timestampValue(BigInt(instantMillis(entry)) * 1000n));

/** Writes one chunk's predictions and metrics as Parquet files at the given locations. */
export async function writeResultParts(
  db: StoreDatabase,
  files: Record<'predictions' | 'metrics', string>,
  job: { jobId: string; model: string; quantiles: readonly number[] },
  results: readonly ForecastResult[],
): Promise<void> {
  const keys = job.quantiles.map(quantileKey);
  await writeAppendedParts(db, files, { predictions: predictionColumns(job.quantiles), metrics: METRIC_COLUMNS }, (pa, ma) => {
    for (const { serie, fcd, seriesIndex, fcdIndex, prediction: answer } of results) {
      const identify = (a: DuckDBAppender) => {
        a.appendVarchar(job.jobId);
        a.appendVarchar(job.model);
        a.appendInteger(seriesIndex);
        a.appendInteger(fcdIndex);
        a.appendInteger(fcd);
        time(a, serie.index[fcd - 1]);
      };
      const { prediction, index, metrics } = answer;
      const quantiles = keys.map((k) => prediction[k]);
      for (let h = 0; h < index.length; h++) {
        identify(pa);
        pa.appendInteger(h + 1);
        time(pa, index[h]);
        pa.appendVarchar(index[h]);
        pa.appendDouble(prediction.mean[h]);
        for (const q of quantiles) pa.appendDouble(q[h]);
        num(pa, serie.target[fcd + h]);
        pa.endRow();
      }
      identify(ma);
      ma.appendInteger(Math.max(0, Math.min(index.length, serie.target.length - fcd)));
      for (const m of METRIC_NAMES) num(ma, metrics?.[m]);
      ma.appendBoolean(answer.refitted ?? true);
      ma.endRow();
    }
  });
}

/** A chunk's predictions and metrics parts, for either kind of job, each replacing the chunk's earlier part whole. */
export function writeChunkParts(
  objects: ObjectStore,
  jobId: string,
  chunk: number,
  produce: (files: Record<ResultTable, string>) => Promise<void>,
): Promise<void> {
  return objects.writeWith(partKey(jobId, 'predictions', chunk), (predictions) =>
    objects.writeWith(partKey(jobId, 'metrics', chunk), (metrics) => produce({ predictions, metrics })),
  );
}

/**
 * One chunk's two Parquet files, for either kind of job: rows appended by `fill` to two TEMP
 * tables of the given columns, copied to the files, the tables dropped whatever happens.
 */
export async function writeAppendedParts(
  db: StoreDatabase,
  files: Record<ResultTable, string>,
  columns: Record<ResultTable, readonly string[]>,
  fill: (predictions: DuckDBAppender, metrics: DuckDBAppender) => void,
): Promise<void> {
  await db.use(async (connection) => {
    const suffix = `${process.pid}_${Math.random().toString(36).slice(2)}`;
    const pred = `pred_${suffix}`;
    const met = `met_${suffix}`;
    try {
      await connection.run(`CREATE TEMP TABLE ${pred} (${columns.predictions.join(', ')})`);
      await connection.run(`CREATE TEMP TABLE ${met} (${columns.metrics.join(', ')})`);
      const pa = await connection.createAppender(pred, 'main', 'temp');
      const ma = await connection.createAppender(met, 'main', 'temp');
      fill(pa, ma);
      pa.closeSync();
      ma.closeSync();
      await connection.run(`COPY ${pred} TO ${sqlString(files.predictions)} (FORMAT parquet)`);
      await connection.run(`COPY ${met} TO ${sqlString(files.metrics)} (FORMAT parquet)`);
    } finally {
      await connection.run(`DROP TABLE IF EXISTS ${pred}`).catch(() => undefined);
      await connection.run(`DROP TABLE IF EXISTS ${met}`).catch(() => undefined);
    }
  });
}

/** Rows in the Parquet files a glob matches. */
export function countRows(db: StoreDatabase, glob: string): Promise<number> {
  return db.use(async (c) => Number((await c.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlString(glob)})`)).getRowObjects()[0].n));
}

/** Predictions of series [from, to) from the parts: `series[i][j]` in the synchronous response's shape. */
export function readPredictions(
  db: StoreDatabase,
  globs: Record<'predictions' | 'metrics', string>,
  quantiles: readonly number[],
  from: number,
  to: number,
  sayRefitted: boolean,
): Promise<Prediction[][]> {
  const keys = quantiles.map(quantileKey);
  const out: Prediction[][] = Array.from({ length: to - from }, () => []);
  return db.use(async (c) => {
    const range = `WHERE series_index >= ${from} AND series_index < ${to}`;
    const predictions = await c.runAndReadAll(
      `SELECT series_index, fcd_index, timestamp_text, mean${quantiles.map((l) => `, ${quantileColumn(l)}`).join('')}
       FROM read_parquet(${sqlString(globs.predictions)}) ${range} ORDER BY series_index, fcd_index, step`,
    );
    for (const row of predictions.getRows()) {
      const [series, fcd, timestamp, mean, ...values] = row as [number, number, string, number, ...number[]];
      const entry = (out[series - from][fcd] ??= {
        prediction: { mean: [], ...Object.fromEntries(keys.map((k) => [k, [] as number[]])) },
        index: [],
        metrics: null,
      });
      entry.index.push(timestamp);
      entry.prediction.mean.push(mean);
      keys.forEach((k, q) => entry.prediction[k].push(values[q]));
    }
    const metrics = await c.runAndReadAll(
      `SELECT series_index, fcd_index, known_steps, refitted, ${METRIC_NAMES.join(', ')} FROM read_parquet(${sqlString(globs.metrics)}) ${range}`,
    );
    for (const [series, fcd, known, refitted, ...values] of metrics.getRows() as [number, number, number, boolean, ...(number | null)[]][]) {
      const entry = out[series - from][fcd];
      if (!entry) continue;
      if (known > 0) entry.metrics = Object.fromEntries(METRIC_NAMES.map((m, k) => [m, values[k]])) as Metrics;
      if (sayRefitted) entry.refitted = refitted;
    }
    return out;
  });
}

/** The order a forecast job's merged download is in. */
export const forecastOrder = (table: 'predictions' | 'metrics'): string =>
  table === 'predictions' ? 'series_index, fcd_index, step' : 'series_index, fcd_index';

/** The parts a glob matches merged into one Parquet file at `location`, in the given order. */
export function mergeParts(db: StoreDatabase, glob: string, order: string, location: string): Promise<void> {
  return db.use((c) =>
    c.run(`COPY (SELECT * FROM read_parquet(${sqlString(glob)}) ORDER BY ${order}) TO ${sqlString(location)} (FORMAT parquet)`).then(() => undefined),
  );
}
