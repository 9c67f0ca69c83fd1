import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBAppender } from '@duckdb/node-api';
import type { PlannedPrediction } from '../engine/forecast.ts';
import { quantileColumn } from '../engine/jobs/layout.ts';
import { quantileKey } from '../engine/quantile-key.ts';
import type { InputSerie } from '../engine/request-schema.ts';

let database: Promise<DuckDBInstance> | undefined;
const db = () => (database ??= DuckDBInstance.create(':memory:'));

/** Identifies each row set: which job, series and forecast creation date it answers. */
export interface RowKeys {
  jobId: string;
  model: string;
  /** Request position of each planned forecast's series and fcd (chunk positions mapped back). */
  seriesIndex: (p: PlannedPrediction) => number;
  fcdIndex: (p: PlannedPrediction) => number;
  serie: (p: PlannedPrediction) => InputSerie;
}

const num = (a: DuckDBAppender, v: number | null | undefined) => (v == null ? a.appendNull() : a.appendDouble(v));

/**
 * Writes one chunk's predictions (long form, one row per step) and metrics (one row per series
 * and forecast creation date) as Parquet. Each file is written under a temporary name and
 * renamed into place, so a retried activity replaces its part instead of adding rows.
 */
export async function writeChunkParts(
  files: { predictions: string; metrics: string },
  keys: RowKeys,
  levels: number[],
  rows: PlannedPrediction[],
  attempt: number,
): Promise<void> {
  const qcols = levels.map((l) => quantileColumn(quantileKey(l)));
  const connection = await (await db()).connect();
  const suffix = `${process.pid}_${attempt}_${Math.random().toString(36).slice(2)}`;
  const pred = `pred_${suffix}`;
  const met = `met_${suffix}`;
  try {
    const ident = `job_id VARCHAR, model VARCHAR, series_index INTEGER, fcd_index INTEGER, fcd INTEGER, fcd_timestamp VARCHAR`;
    await connection.run(
      `CREATE TEMP TABLE ${pred} (${ident}, step INTEGER, "timestamp" VARCHAR, mean DOUBLE${qcols.map((c) => `, ${c} DOUBLE`).join('')}, actual DOUBLE)`,
    );
    await connection.run(`CREATE TEMP TABLE ${met} (${ident}, known_steps INTEGER, mae DOUBLE, mape DOUBLE, crps DOUBLE, wape DOUBLE, scaled_bias DOUBLE)`);
    const pa = await connection.createAppender(pred, 'main', 'temp');
    const ma = await connection.createAppender(met, 'main', 'temp');
    for (const row of rows) {
      const serie = keys.serie(row);
      const { fcd } = row.planned;
      const head = (a: DuckDBAppender) => {
        a.appendVarchar(keys.jobId);
        a.appendVarchar(keys.model);
        a.appendInteger(keys.seriesIndex(row));
        a.appendInteger(keys.fcdIndex(row));
        a.appendInteger(fcd);
        a.appendVarchar(serie.index[fcd - 1]);
      };
      const { prediction, index, metrics } = row.prediction;
      const quantiles = levels.map((l) => prediction[quantileKey(l)]);
      for (let h = 0; h < index.length; h++) {
        head(pa);
        pa.appendInteger(h + 1);
        pa.appendVarchar(index[h]);
        pa.appendDouble(prediction.mean[h]);
        for (const q of quantiles) pa.appendDouble(q[h]);
        num(pa, serie.target[fcd + h]);
        pa.endRow();
      }
      head(ma);
      ma.appendInteger(Math.max(0, Math.min(index.length, serie.target.length - fcd)));
      num(ma, metrics?.mae);
      num(ma, metrics?.mape);
      num(ma, metrics?.crps);
      num(ma, metrics?.wape);
      num(ma, metrics?.scaled_bias);
      ma.endRow();
    }
    pa.closeSync();
    ma.closeSync();
    for (const [table, file] of [
      [pred, files.predictions],
      [met, files.metrics],
    ] as const) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      const tmp = `${file}.tmp-${suffix}`;
      await connection.run(`COPY ${table} TO '${tmp.replaceAll("'", "''")}' (FORMAT parquet)`);
      fs.renameSync(tmp, file);
    }
  } finally {
    await connection.run(`DROP TABLE IF EXISTS ${pred}`).catch(() => undefined);
    await connection.run(`DROP TABLE IF EXISTS ${met}`).catch(() => undefined);
    connection.closeSync();
  }
}

/** Rows in a job's predictions and metrics parts. */
export async function countResultRows(predictionsGlob: string, metricsGlob: string): Promise<{ predictionRows: number; metricRows: number }> {
  const connection = await (await db()).connect();
  try {
    const count = async (glob: string) => {
      const reader = await connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${glob.replaceAll("'", "''")}')`);
      return Number(reader.getRowObjects()[0].n);
    };
    return { predictionRows: await count(predictionsGlob), metricRows: await count(metricsGlob) };
  } finally {
    connection.closeSync();
  }
}
