import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, type Config } from '../../config.ts';
import { testConfig } from '../api/helpers.ts';
import { writeParquet } from '../beta/helpers.ts';

/**
 * What a schedule's runs read, for the tests of the dashboard's and the CLI's schedule views: a
 * data root (BETA_DATA_ROOT) holding daily sales of two stores as Parquet under `daily/`, and a
 * beta query over that folder with two cutoffs, so that every run is scored.
 */

/** Daily sales of stores a and b from 2024-01-01, `days` of them: a straight line per store. */
export const dailySalesSql = (days: number) => `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS ts, store, (d + 1) * 2.0 + (CASE WHEN store = 'b' THEN 50 ELSE 0 END) AS sales
  FROM range(${days}) r(d), (VALUES ('a'), ('b')) s(store)`;

export const DAILY_SOURCE = 'daily/*.parquet';

/** The beta query of every run: two daily cutoffs counted back from the data's end, a 2-day horizon. */
export const dailyQuery = (source = DAILY_SOURCE) => ({
  input: { source, columns: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sales: { kind: 'target', aggregate: 'sum' } } },
  prediction_length: '2d',
  quantiles: [0.1, 0.9],
  cutoff: [{ every: '1d', last: 2 }],
});

/** Writes the data under `root` and returns a test configuration that reads it; `env` adds settings (SCHEDULE_WEBHOOK_HOSTS). */
export async function scheduleTestConfig(root: string, env: Record<string, string> = {}): Promise<Config> {
  fs.mkdirSync(path.join(root, 'daily'), { recursive: true });
  await writeParquet(path.join(root, 'daily', 'part-1.parquet'), dailySalesSql(10));
  const loaded = loadConfig(env);
  return testConfig({ beta: { ...loaded.beta, dataRoot: root }, schedules: loaded.schedules });
}
