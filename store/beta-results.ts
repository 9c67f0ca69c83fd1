import { timestampValue, type DuckDBAppender, type DuckDBTimestampValue } from '@duckdb/node-api';
import { addDuration, type Duration } from '../engine/beta/duration.ts';
import type { ForecastRecord } from '../engine/beta/forecast-record.ts';
import { emptySeries, fillSeries, type PreparedSeries, type SeriesHead } from '../engine/beta/prepare.ts';
import { sqlIdent, sqlString } from '../engine/sql.ts';
import type { ScheduledRunOf } from './layout.ts';
import type { StoreDatabase } from './store-database.ts';
import { METRIC_NAMES, quantileColumn, writeAppendedParts } from './results.ts';

/**
 * A beta job's results as Parquet, columns named for analysts: one column per identifier, named
 * as in the query (null where a roll-up level aggregates it away), then `cutoff` and `time`
 * (TIMESTAMP, UTC), the target's name, the step, the model, `mean`, one column per quantile and
 * the actual where the data has it. Metrics: one row per (series, cutoff, target), with whether
 * the model was refitted at that cutoff. A scheduled run's rows end with `schedule_id` and
 * `scheduled_at`, so one query over the store ranks runs over time. A reconciled job's rows name
 * their `level` after the identifiers, and keep the unreconciled `base_mean` beside `mean`.
 * Also the chunk inputs' values, which the job's planning wrote as Parquet.
 */

/** Column names of the results that an identifier may not take. */
export const BETA_RESULT_COLUMNS = [
  'job_id',
  'cutoff',
  'time',
  'target',
  'step',
  'model',
  'mean',
  'actual',
  'known_steps',
  'refitted',
  'schedule_id',
  'scheduled_at',
  'level',
  'base_mean',
  ...METRIC_NAMES,
] as const;

/** What a beta chunk's results are named by. */
export interface BetaResultNames {
  jobId: string;
  model: string;
  identifiers: readonly string[];
  targets: readonly string[];
  levels: readonly number[];
  freq: Duration;
  horizon: number;
  /** Set for a scheduled run. */
  schedule?: ScheduledRunOf;
  /** Set when the job reconciles: its rows then carry `level` and `base_mean`. */
  reconciled?: boolean;
}

const levelColumn = (names: BetaResultNames) => (names.reconciled ? ['level VARCHAR'] : []);

const scheduleColumns = (names: BetaResultNames) => (names.schedule ? ['schedule_id VARCHAR', 'scheduled_at TIMESTAMP'] : []);

const num = (a: DuckDBAppender, v: number | null | undefined) => (v == null || Number.isNaN(v) ? a.appendNull() : a.appendDouble(v));

export function betaPredictionColumns(names: BetaResultNames): string[] {
  return [
    ...names.identifiers.map((id) => `${sqlIdent(id)} VARCHAR`),
    ...levelColumn(names),
    'cutoff TIMESTAMP',
    '"time" TIMESTAMP',
    'target VARCHAR',
    'step INTEGER',
    'model VARCHAR',
    'mean DOUBLE',
    ...(names.reconciled ? ['base_mean DOUBLE'] : []),
    ...names.levels.map((l) => `${quantileColumn(l)} DOUBLE`),
    'actual DOUBLE',
    ...scheduleColumns(names),
  ];
}

const metricColumns = (names: BetaResultNames) => [
  ...names.identifiers.map((id) => `${sqlIdent(id)} VARCHAR`),
  ...levelColumn(names),
  'cutoff TIMESTAMP',
  'target VARCHAR',
  'model VARCHAR',
  'known_steps INTEGER',
  ...METRIC_NAMES.map((m) => `${m} DOUBLE`),
  // False where the model kept an earlier cutoff's fit (the query's refit policy).
  'refitted BOOLEAN',
  ...scheduleColumns(names),
];

/** The order a merged download is in: by series, cutoff, target, step. */
export const betaOrder = (identifiers: readonly string[], table: 'predictions' | 'metrics'): string =>
  [...identifiers.map(sqlIdent), 'cutoff', 'target', ...(table === 'predictions' ? ['step'] : [])].join(', ');

export async function writeBetaResultParts(
  db: StoreDatabase,
  files: Record<'predictions' | 'metrics', string>,
  names: BetaResultNames,
  forecasts: Iterable<ForecastRecord>,
): Promise<void> {
  // A job has few distinct cutoffs and step times: their DuckDB values are made once each.
  const times = new Map<number, DuckDBTimestampValue>();
  const ts = (a: DuckDBAppender, ms: number) => {
    let value = times.get(ms);
    if (!value) times.set(ms, (value = timestampValue(BigInt(ms) * 1000n)));
    a.appendTimestamp(value);
  };
  const stepTimes = new Map<number, number[]>();
  const stepsAfter = (cutoff: number) => {
    let steps = stepTimes.get(cutoff);
    if (!steps) stepTimes.set(cutoff, (steps = Array.from({ length: names.horizon }, (_, h) => addDuration(cutoff, names.freq, h + 1))));
    return steps;
  };
  const schedule = names.schedule && { id: names.schedule.schedule_id, at: Date.parse(names.schedule.scheduled_at) };
  const scheduled = (a: DuckDBAppender) => {
    if (!schedule) return;
    a.appendVarchar(schedule.id);
    ts(a, schedule.at);
  };
  await writeAppendedParts(db, files, { predictions: betaPredictionColumns(names), metrics: metricColumns(names) }, (pa, ma) => {
    for (const { ids, cutoff, refitted, target, mean, quantiles, actuals, metrics, reconciled } of forecasts) {
      const steps = stepsAfter(cutoff);
      const identify = (a: DuckDBAppender) => {
        for (const id of ids) id === null ? a.appendNull() : a.appendVarchar(id);
        if (reconciled) a.appendVarchar(reconciled.level);
        ts(a, cutoff);
      };
      const targetName = names.targets[target];
      for (let h = 0; h < names.horizon; h++) {
        identify(pa);
        ts(pa, steps[h]);
        pa.appendVarchar(targetName);
        pa.appendInteger(h + 1);
        pa.appendVarchar(names.model);
        pa.appendDouble(mean[h]);
        if (reconciled) pa.appendDouble(reconciled.baseMean[h]);
        for (const q of quantiles) pa.appendDouble(q[h]);
        num(pa, h < actuals.length ? actuals[h] : null);
        scheduled(pa);
        pa.endRow();
      }
      identify(ma);
      ma.appendVarchar(targetName);
      ma.appendVarchar(names.model);
      ma.appendInteger(actuals.length);
      for (const m of METRIC_NAMES) num(ma, metrics?.[m]);
      ma.appendBoolean(refitted);
      scheduled(ma);
      ma.endRow();
    }
  });
}

/** A beta chunk's series: their heads, with values read from the chunk's Parquet (`sid, at, <values...>`). */
export function readBetaChunkSeries(
  db: StoreDatabase,
  location: string,
  heads: SeriesHead[],
  shape: { freq: Duration; targets: number; covariates: number },
): Promise<PreparedSeries[]> {
  const series = emptySeries(heads, shape.freq, shape.targets, shape.covariates);
  // The file holds each step's offset from the series' start, so every k0 here is 0.
  const bySid = new Map(heads.map((h, i) => [h.sid, { series: series[i], k0: 0 }]));
  return db.use(async (c) => {
    await fillSeries(await c.stream(`SELECT * FROM read_parquet(${sqlString(location)})`), bySid);
    return series;
  });
}
