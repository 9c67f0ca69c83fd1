import type { Metrics } from '../response-schema.ts';
import type { ReconciledExtras, TargetForecast } from './backtest.ts';

/**
 * One forecast of one target as a job's result writer records it, whatever made it: a chunk's
 * backtest (`TargetForecast`), or a cutoff's reconciliation, which reads its base forecasts back
 * from Parquet and has no prepared series.
 */
export interface ForecastRecord {
  /** One value per identifier; null where the series' level aggregates it away. */
  readonly ids: readonly (string | null)[];
  readonly cutoff: number;
  /** False where the model kept an earlier cutoff's fit (the refit policy). */
  readonly refitted: boolean;
  readonly target: number;
  readonly mean: ArrayLike<number>;
  /** One array per quantile level of the results. */
  readonly quantiles: readonly ArrayLike<number>[];
  /** The true values after the cutoff, where the data has them. */
  readonly actuals: ArrayLike<number>;
  readonly metrics: Metrics | null;
  readonly reconciled?: ReconciledExtras;
}

export const forecastRecord = (f: TargetForecast): ForecastRecord => ({
  ids: f.planned.series.ids,
  cutoff: f.planned.cutoff,
  refitted: f.planned.fittedAt === f.planned.seen,
  target: f.target,
  mean: f.output.mean,
  quantiles: f.output.quantiles,
  actuals: f.actuals,
  metrics: f.metrics,
  ...(f.reconciled && { reconciled: f.reconciled }),
});

/** The records of a backtest's forecasts, one at a time. */
export function* forecastRecords(forecasts: Iterable<TargetForecast>): Generator<ForecastRecord> {
  for (const f of forecasts) yield forecastRecord(f);
}
