import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { sqlString, withConnection } from '../../engine/sql.ts';
import type { ApiClient } from './client.ts';
import { ApiError, CliError } from './errors.ts';

/**
 * A completed job's results, downloaded into a folder as the service exports them
 * (`predictions.parquet`, `metrics.parquet`; docs/operations.md, "Results for analysts"), with each row's
 * `unique_id` put first when the series' ids are known: the service numbers series by their
 * place in the request (`series_index`), and the CLI sent them in unique_id order.
 */

const TABLES = ['predictions', 'metrics'] as const;
type Table = (typeof TABLES)[number];

const ROW_ORDER: Record<Table, string> = { predictions: 'series_index, fcd_index, step', metrics: 'series_index, fcd_index' };

export interface DownloadedResults {
  files: string[];
  /** Why a table was left out, for the caller to say. */
  notes: string[];
}

export async function downloadResults(client: ApiClient, jobId: string, outDir: string, ids: readonly string[] | null): Promise<DownloadedResults> {
  try {
    fs.mkdirSync(outDir, { recursive: true });
  } catch (error) {
    throw new CliError(`cannot write the results to the folder ${outDir}: ${(error as Error).message}`);
  }
  const result: DownloadedResults = { files: [], notes: [] };
  for (const table of TABLES) {
    const file = path.join(outDir, `${table}.parquet`);
    try {
      await client.download(`/forecast-jobs/${encodeURIComponent(jobId)}/${table}.parquet`, file);
    } catch (error) {
      // A job with no forecast at all (every series context-only) has no results to export.
      if (error instanceof ApiError && error.status === 404 && error.problem.code === 'not_found' && result.files.length > 0) continue;
      throw error;
    }
    const scored = await finishTable(file, table, ids);
    if (table === 'metrics' && !scored) {
      fs.rmSync(file);
      result.notes.push('no metrics.parquet: no forecast had actual values to be scored against (a backtest with --fcds has them)');
      continue;
    }
    result.files.push(file);
  }
  return result;
}

/** Puts unique_id in a downloaded table; for metrics, says whether any forecast was scored. */
async function finishTable(file: string, table: Table, ids: readonly string[] | null): Promise<boolean> {
  const db = await DuckDBInstance.create(':memory:');
  try {
    return await withConnection(db, async (connection) => {
      const source = `read_parquet(${sqlString(file)})`;
      if (ids) await attachSeriesIds(connection, source, file, table, ids);
      if (table !== 'metrics') return true;
      const scored = (await connection.runAndReadAll(`SELECT count(*) FILTER (WHERE known_steps > 0)::INTEGER AS n FROM ${source}`)).getRowObjectsJS();
      return Number(scored[0].n) > 0;
    });
  } finally {
    db.closeSync();
  }
}

async function attachSeriesIds(connection: DuckDBConnection, source: string, file: string, table: Table, ids: readonly string[]): Promise<void> {
  const [{ series }] = (await connection.runAndReadAll(`SELECT (max(series_index) + 1)::INTEGER AS series FROM ${source}`)).getRowObjectsJS();
  if (Number(series) > ids.length) {
    throw new CliError(
      `the job's results have ${series} series but the input file has ${ids.length} unique_ids: it is not the file the job was submitted from`,
    );
  }
  await connection.run(`CREATE TEMP TABLE series_ids (series_index INTEGER, unique_id VARCHAR)`);
  const appender = await connection.createAppender('series_ids');
  ids.forEach((id, index) => {
    appender.appendInteger(index);
    appender.appendVarchar(id);
    appender.endRow();
  });
  appender.closeSync();
  const rewritten = `${file}.rewrite`;
  await connection.run(
    `COPY (SELECT i.unique_id, r.* FROM ${source} r JOIN series_ids i ON i.series_index = r.series_index ORDER BY ${ROW_ORDER[table]})
     TO ${sqlString(rewritten)} (FORMAT parquet)`,
  );
  fs.renameSync(rewritten, file);
}
