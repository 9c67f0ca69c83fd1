import type { DuckDBAppender } from '@duckdb/node-api';
import type { ForecastRecord } from '../engine/beta/forecast-record.ts';
import { sqlString } from '../engine/sql.ts';
import type { BaseTable } from './layout.ts';
import type { StoreDatabase } from './store-database.ts';

/**
 * A reconciling beta job's base forecasts (docs/decisions/064-reconciliation-in-beta-jobs.md):
 * each chunk writes two Parquet parts in long form, its forecasts (a row per step) and its
 * one-step residuals (a row per residual), and each cutoff's activity reads that cutoff's rows
 * back from every chunk's parts with DuckDB, one list per forecast. Columns are positional
 * (`id_0`, `q_0`): no client reads these files, and no identifier can clash with them.
 */

/** One base forecast: the record a chunk would have written, with its one-step residuals when the estimator reads them. */
export interface BaseForecast extends Pick<ForecastRecord, 'ids' | 'cutoff' | 'refitted' | 'target' | 'mean' | 'quantiles' | 'actuals'> {
  readonly residuals: Float64Array | null;
}

/** A base forecast read back: its values as arrays of their own. */
export interface StoredBaseForecast {
  readonly ids: (string | null)[];
  readonly target: number;
  readonly refitted: boolean;
  readonly mean: Float64Array;
  readonly quantiles: Float64Array[];
  readonly actuals: Float64Array;
  readonly residuals: Float64Array | null;
}

/** How many identifier and quantile columns the parts have, and the steps of a forecast. */
export interface BaseShape {
  readonly identifiers: number;
  readonly quantiles: number;
  readonly horizon: number;
}

/**
 * Rows per Parquet row group: small, so that a reader filtering on one cutoff skips the row
 * groups of the others by their statistics (rows are written in cutoff order).
 */
const ROW_GROUP = 2048;

const idColumns = (shape: BaseShape) => Array.from({ length: shape.identifiers }, (_, i) => `id_${i}`);
const quantileColumns = (shape: BaseShape) => Array.from({ length: shape.quantiles }, (_, i) => `q_${i}`);

const COLUMNS = {
  forecasts: (shape: BaseShape) => [
    ...idColumns(shape).map((c) => `${c} VARCHAR`),
    'cutoff BIGINT',
    'target INTEGER',
    'refitted BOOLEAN',
    'step INTEGER',
    'mean DOUBLE',
    ...quantileColumns(shape).map((c) => `${c} DOUBLE`),
    'actual DOUBLE',
  ],
  residuals: (shape: BaseShape) => [...idColumns(shape).map((c) => `${c} VARCHAR`), 'cutoff BIGINT', 'target INTEGER', 'position INTEGER', 'residual DOUBLE'],
};

/** Writes one chunk's base forecasts and residuals to Parquet files at the given locations. */
export async function writeBaseForecastParts(
  db: StoreDatabase,
  files: Record<BaseTable, string>,
  shape: BaseShape,
  forecasts: Iterable<BaseForecast>,
): Promise<void> {
  await db.use(async (c) => {
    const suffix = `${process.pid}_${Math.random().toString(36).slice(2)}`;
    const tables = { forecasts: `base_forecasts_${suffix}`, residuals: `base_residuals_${suffix}` };
    try {
      for (const table of ['forecasts', 'residuals'] as const) await c.run(`CREATE TEMP TABLE ${tables[table]} (${COLUMNS[table](shape).join(', ')})`);
      const fa = await c.createAppender(tables.forecasts, 'main', 'temp');
      const ra = await c.createAppender(tables.residuals, 'main', 'temp');
      for (const f of forecasts) {
        const identify = (a: DuckDBAppender) => {
          for (const id of f.ids) id === null ? a.appendNull() : a.appendVarchar(id);
          a.appendBigInt(BigInt(f.cutoff));
          a.appendInteger(f.target);
        };
        for (let h = 0; h < shape.horizon; h++) {
          identify(fa);
          fa.appendBoolean(f.refitted);
          fa.appendInteger(h + 1);
          fa.appendDouble(f.mean[h]);
          for (const q of f.quantiles) fa.appendDouble(q[h]);
          h < f.actuals.length ? fa.appendDouble(f.actuals[h]) : fa.appendNull();
          fa.endRow();
        }
        f.residuals?.forEach((residual, position) => {
          identify(ra);
          ra.appendInteger(position);
          ra.appendDouble(residual);
          ra.endRow();
        });
      }
      fa.closeSync();
      ra.closeSync();
      // By cutoff, in small row groups: a reader of one cutoff skips the rest.
      for (const table of ['forecasts', 'residuals'] as const)
        await c.run(`COPY (SELECT * FROM ${tables[table]} ORDER BY cutoff) TO ${sqlString(files[table])} (FORMAT parquet, ROW_GROUP_SIZE ${ROW_GROUP})`);
    } finally {
      for (const table of Object.values(tables)) await c.run(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    }
  });
}

/** Every base forecast at one cutoff, from the parts the globs match; residuals only when asked for. */
export function readBaseForecasts(
  db: StoreDatabase,
  globs: Record<BaseTable, string>,
  shape: BaseShape,
  cutoff: number,
  withResiduals: boolean,
): Promise<StoredBaseForecast[]> {
  const ids = idColumns(shape);
  const key = [...ids, 'target'].join(', ');
  const at = `WHERE cutoff = ${Math.trunc(cutoff)}`;
  // Known actuals are the first steps': a step past the data has none.
  const lists = ['mean', ...quantileColumns(shape)].map((c) => `list(${c} ORDER BY step)`);
  const forecasts = `SELECT ${key}, bool_and(refitted), ${lists.join(', ')}, list(actual ORDER BY step) FILTER (WHERE actual IS NOT NULL)
                     FROM read_parquet(${sqlString(globs.forecasts)}) ${at} GROUP BY ${key}`;
  const residuals = `SELECT ${key}, list(residual ORDER BY position) FROM read_parquet(${sqlString(globs.residuals)}) ${at} GROUP BY ${key}`;
  return db.use(async (c) => {
    const byKey = new Map<string, Float64Array>();
    if (withResiduals) {
      for (const row of (await c.runAndReadAll(residuals)).getRowsJS()) byKey.set(JSON.stringify(row.slice(0, -1)), Float64Array.from(row.at(-1) as number[]));
    }
    return (await c.runAndReadAll(forecasts)).getRowsJS().map((row) => {
      const [target, refitted, mean, ...rest] = row.slice(shape.identifiers) as [number, boolean, number[], ...(number[] | null)[]];
      return {
        ids: row.slice(0, shape.identifiers) as (string | null)[],
        target,
        refitted,
        mean: Float64Array.from(mean),
        quantiles: rest.slice(0, shape.quantiles).map((q) => Float64Array.from(q!)),
        actuals: Float64Array.from(rest[shape.quantiles] ?? []),
        residuals: withResiduals ? (byKey.get(JSON.stringify(row.slice(0, shape.identifiers + 1))) ?? null) : null,
      };
    });
  });
}
