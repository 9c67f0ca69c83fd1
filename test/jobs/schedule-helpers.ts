import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../config.ts';
import { AUTH, testConfig } from '../api/helpers.ts';
import { tempDir, writeParquet } from '../beta/helpers.ts';
import { startJobsStack, type JobsStack } from './temporal-env.ts';

/** What the schedule suites share: a jobs stack over a data root of daily sales, and calls on its API. */

/** Daily sales of two stores from 2024-01-01, `days` of them. */
export const sales = (days: number) => `
  SELECT TIMESTAMP '2024-01-01' + INTERVAL (d) DAY AS ts, store, (d + 1) * 2.0 + (CASE WHEN store = 'b' THEN 50 ELSE 0 END) AS sales
  FROM range(${days}) r(d), (VALUES ('a'), ('b')) s(store)`;

/** A schedule's query over the sales files `source` finds: two daily cutoffs counted back from the data's end. */
export const query = (source: string, extra: Record<string, unknown> = {}) => ({
  input: { source, columns: { ts: { kind: 'time', frequency: '1d' }, store: 'identifier', sales: { kind: 'target', aggregate: 'sum' } } },
  prediction_length: '2d',
  quantiles: [0.1, 0.9],
  cutoff: [{ every: '1d', last: 2 }],
  ...extra,
});

/** What ScheduleService takes to make a schedule of naive forecasts over the daily files, every `interval`. */
export const serviceInput = (interval: string) => ({
  model: 'naive',
  query: query('daily/*.parquet'),
  spec: { interval, time_zone: 'UTC' },
  overlap: 'skip',
  catch_up_window: '1d',
  paused: false,
  webhook: null,
  alert: null,
});

export interface RunRow {
  job_id: string;
  status: string;
  scheduled_at: string;
  started_at: string;
  error: unknown;
  metrics: unknown[];
}

/** The schedule routes of `app`, with alice's key unless told otherwise. */
export function scheduleCalls(app: () => FastifyInstance) {
  const get = (url: string, headers = AUTH) => app().inject({ method: 'GET', url, headers });
  return {
    create: (body: Record<string, unknown>, headers: Record<string, string> = AUTH, model = 'naive') =>
      app().inject({ method: 'POST', url: `/v1-beta/forecast-schedules?model=${model}`, headers, payload: body }),
    get,
    trigger: (id: string) => app().inject({ method: 'POST', url: `/v1-beta/forecast-schedules/${id}/trigger`, headers: AUTH }),
    runs: async (id: string) => (await get(`/v1-beta/forecast-schedules/${id}/runs`)).json().runs as RunRow[],
  };
}

/**
 * A jobs stack on task queue `queue` whose beta data root holds `daily/part-1.parquet` (10 days
 * of sales); `env` adds settings read as the environment (webhook hosts, quotas).
 */
export async function startScheduleStack(queue: string, env: Record<string, string> = {}): Promise<{ stack: JobsStack; root: string }> {
  const root = tempDir('schedules-root-');
  const settings = loadConfig(env);
  const config = testConfig({ beta: { ...loadConfig().beta, dataRoot: root }, schedules: settings.schedules, quotas: settings.quotas });
  const stack = await startJobsStack(config, queue, 2);
  fs.mkdirSync(path.join(root, 'daily'));
  await writeParquet(path.join(root, 'daily', 'part-1.parquet'), sales(10));
  return { stack, root };
}
