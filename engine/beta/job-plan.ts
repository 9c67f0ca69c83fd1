import fs from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { forecastsPerChunk } from '../jobs/chunking.ts';
import { sqlString } from '../sql.ts';
import { dataSpan, noForecastRefusal, queryCutoffs, seriesCutoffs } from './backtest.ts';
import { asMemoryRefusal } from './beta-database.ts';
import { stepTime } from './grid-sql.ts';
import { prepareSeriesTables, readHeads, type SeriesHead } from './prepare.ts';
import type { ResolvedBetaQuery } from './resolved-query.ts';
import type { BetaSources } from './table-sources.ts';

/**
 * A beta job's planning: the schema logic leaves the prepared series in DuckDB, the cutoffs are
 * resolved over the whole data, and consecutive series are grouped into chunks of about
 * `forecastsPerChunk` (series, cutoff) pairs, the rule forecast jobs follow too. Each chunk's
 * values are written by DuckDB straight from its tables into one Parquet file per chunk, so no
 * process holds the whole input.
 */

export interface PlannedChunk {
  heads: SeriesHead[];
  /** Parquet of `sid, at, <targets...>, <covariates...>`, `at` the step's offset from the series' start. */
  file: string;
  forecasts: number;
}

export interface BetaJobPlan {
  identifiers: string[];
  targets: string[];
  covariates: number;
  cutoffs: number[] | null;
  /** The cutoffs at which some series is forecast, ascending: a reconciling job reconciles each once. */
  forecastCutoffs: number[];
  chunks: PlannedChunk[];
}

export async function planBetaChunks(
  c: DuckDBConnection,
  query: ResolvedBetaQuery,
  sources: BetaSources,
  options: {
    minimumForecastsPerChunk: number;
    dir: string;
    /** The model learns across the job's series (couplesSeries): one chunk holds them all, as the synchronous call sees them. */
    coupled: boolean;
  },
): Promise<BetaJobPlan> {
  try {
    const tables = await prepareSeriesTables(c, query, sources);
    const { freq } = tables;
    const heads = await readHeads(c, tables.headsSql, tables.levels);
    const extents = heads.map((h) => ({ start: stepTime(h.k0, freq), length: h.length }));
    const span = dataSpan(extents, freq);
    const cutoffs = queryCutoffs(query, span);

    const forecastCutoffs = new Set<number>();
    const counts = extents.map((e) => {
      const own = seriesCutoffs(e, cutoffs, freq);
      for (const cutoff of own) forecastCutoffs.add(cutoff);
      return own.length;
    });
    const total = counts.reduce((a, b) => a + b, 0);
    if (total === 0) throw noForecastRefusal(span);
    const size = options.coupled ? Infinity : forecastsPerChunk(total, options.minimumForecastsPerChunk);
    const groups: { heads: SeriesHead[]; forecasts: number }[] = [];
    heads.forEach((head, i) => {
      if (counts[i] === 0) return; // Nothing to forecast for it: no chunk needs its values.
      const last = groups.at(-1);
      if (!last || last.forecasts >= size) groups.push({ heads: [head], forecasts: counts[i] });
      else {
        last.heads.push(head);
        last.forecasts += counts[i];
      }
    });

    await c.run('CREATE TEMP TABLE beta_chunk_of (sid INTEGER, chunk INTEGER, k0 DOUBLE)');
    const appender = await c.createAppender('beta_chunk_of', 'main', 'temp');
    groups.forEach((group, chunk) => {
      for (const head of group.heads) {
        appender.appendInteger(head.sid);
        appender.appendInteger(chunk);
        appender.appendDouble(head.k0);
        appender.endRow();
      }
    });
    appender.closeSync();
    // One file per chunk: DuckDB splits a partition across files only past this many open at once.
    await c.run(`SET partitioned_write_max_open_files = ${Math.max(100, groups.length + 1)}`);
    await c.run(
      `COPY (SELECT o.chunk, v.sid, CAST(v.k - o.k0 AS INTEGER) AS at, v.* EXCLUDE (sid, k)
             FROM (${tables.valuesSql}) v JOIN beta_chunk_of o USING (sid))
       TO ${sqlString(options.dir)} (FORMAT parquet, PARTITION_BY (chunk), OVERWRITE_OR_IGNORE)`,
    );
    const chunks: PlannedChunk[] = [];
    for (const [chunk, group] of groups.entries()) {
      const folder = path.join(options.dir, `chunk=${chunk}`);
      const files = (await fs.readdir(folder)).map((name) => path.join(folder, name));
      chunks.push({ heads: group.heads, forecasts: group.forecasts, file: files.length === 1 ? files[0] : await mergeFiles(c, files) });
    }
    const ascending = [...forecastCutoffs].sort((a, b) => a - b);
    return { identifiers: tables.identifiers, targets: tables.targets, covariates: tables.covariates.length, cutoffs, forecastCutoffs: ascending, chunks };
  } catch (error) {
    throw asMemoryRefusal(error) ?? error;
  }
}

/** Several Parquet files of one chunk as one (should DuckDB have split a partition). */
async function mergeFiles(c: DuckDBConnection, files: string[]): Promise<string> {
  const merged = `${files[0]}.merged.parquet`;
  await c.run(`COPY (SELECT * FROM read_parquet([${files.map(sqlString).join(', ')}])) TO ${sqlString(merged)} (FORMAT parquet)`);
  return merged;
}
