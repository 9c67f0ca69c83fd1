import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import type { ClientConfig } from '../../config.ts';
import { ApiError, UsageError, type PathDescriber } from './errors.ts';
import { clientFor } from './options.ts';
import { whenText, type Schedule } from './schedule-view.ts';

/**
 * `forecast schedule create`: POST /v1-beta/forecast-schedules from flags and a query file. The
 * CLI checks only the command line's shape (one cadence, a readable JSON query, a whole alert);
 * the service checks the values, and its field paths are printed with the flag they came from.
 */

interface CreateOptions {
  model: string;
  query: string;
  cron?: string[];
  every?: string;
  timeZone?: string;
  start?: string;
  end?: string;
  overlap?: string;
  catchUpWindow?: string;
  paused?: boolean;
  webhook?: string;
  alertMetric?: string;
  alertAbove?: number;
  idempotencyKey?: string;
  json?: boolean;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function finiteNumber(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new InvalidArgumentError('expected a number');
  return value;
}

/** The beta query in FILE: a JSON object, as the API takes it in `query`. */
function readQuery(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read the query file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
  let query: unknown;
  try {
    query = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`the query file ${file} is not JSON: ${(error as Error).message}`);
  }
  if (query === null || typeof query !== 'object' || Array.isArray(query))
    throw new UsageError(`the query file ${file} must hold one JSON object: the beta query (input, prediction_length, cutoff, ...)`);
  return query as Record<string, unknown>;
}

/** The request body; fields left out get the service's defaults. */
export function scheduleBody(options: CreateOptions): Record<string, unknown> {
  const cron = options.cron ?? [];
  if (cron.length > 0 === (options.every !== undefined)) throw new UsageError('give exactly one of --cron EXPR (repeatable) and --every DURATION');
  if ((options.alertMetric === undefined) !== (options.alertAbove === undefined))
    throw new UsageError('an alert needs both --alert-metric NAME and --alert-above VALUE');
  const spec = {
    ...(cron.length > 0 ? { cron } : { interval: options.every }),
    ...(options.timeZone !== undefined && { time_zone: options.timeZone }),
    ...(options.start !== undefined && { start_at: options.start }),
    ...(options.end !== undefined && { end_at: options.end }),
  };
  return {
    query: readQuery(options.query),
    spec,
    ...(options.overlap !== undefined && { overlap: options.overlap }),
    ...(options.catchUpWindow !== undefined && { catch_up_window: options.catchUpWindow }),
    ...(options.paused && { paused: true }),
    ...(options.webhook !== undefined && { webhook: { url: options.webhook } }),
    ...(options.alertMetric !== undefined && { alert: { metric: options.alertMetric, above: options.alertAbove } }),
  };
}

/** The flag (or the query file) each field of the request came from. */
function describeCreatePath(options: CreateOptions): PathDescriber {
  const flags: [string, string][] = [
    ['query.model', '--model'],
    ['body.spec.cron', '--cron'],
    ['body.spec.interval', '--every'],
    ['body.spec.time_zone', '--time-zone'],
    ['body.spec.start_at', '--start'],
    ['body.spec.end_at', '--end'],
    ['body.overlap', '--overlap'],
    ['body.catch_up_window', '--catch-up-window'],
    ['body.webhook', '--webhook'],
    ['body.alert.metric', '--alert-metric'],
    ['body.alert.above', '--alert-above'],
  ];
  return (path) => {
    if (path === 'body.spec') return options.cron ? '--cron' : '--every';
    if (path === 'body.query') return `the query file ${options.query}`;
    if (path.startsWith('body.query.')) return `${path.slice('body.query.'.length)} in ${options.query}`;
    return flags.find(([prefix]) => path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`))?.[1];
  };
}

export function createScheduleCommand(schedule: Command, config: ClientConfig): void {
  schedule
    .command('create')
    .description('schedule a beta backtest: every run is a beta job over what the query finds then; prints the schedule id')
    .requiredOption('--model <name>', 'model of every run')
    .requiredOption('--query <file>', 'a JSON file holding the beta query; its sources are locators (a bucket glob, or a path under BETA_DATA_ROOT)')
    .option('--cron <expr>', 'run at these times: a five-field cron expression (0 6 * * 1: Mondays at 06:00); repeatable', collect)
    .option('--every <duration>', 'or run every DURATION (1h, 1d, 1w), counted from the Unix epoch')
    .option('--time-zone <zone>', 'IANA time zone the cron expressions are read in (default: UTC)')
    .option('--start <time>', 'no run before this time (ISO 8601)')
    .option('--end <time>', 'no run after this time (ISO 8601)')
    .option(
      '--overlap <policy>',
      'when a run is due while the last still runs: skip (default), buffer_one, buffer_all, cancel_other, terminate_other, allow_all',
    )
    .option('--catch-up-window <duration>', 'after an outage, a missed run still starts if at most this late (default: 1d)')
    .option('--paused', 'make it paused: no run until `forecast schedule resume` (or a trigger)')
    .option('--webhook <url>', "call this URL with each run's summary, signed with a secret the service makes and this command prints once")
    .option('--alert-metric <name>', 'mark a run alerted when this pooled metric (mae, mape, crps, wape, scaled_bias) ...')
    .option('--alert-above <value>', '... is above this value', finiteNumber)
    .option('--idempotency-key <key>', 'names this creation: sending it again gives the same schedule, never a second (default: a new UUID)')
    .option('--json', "print the service's answer as JSON")
    .action(async (options: CreateOptions, self: Command) => {
      const body = scheduleBody(options);
      const client = clientFor(self, config);
      let created: Schedule;
      try {
        created = await client.json<Schedule>(
          'POST',
          `/v1-beta/forecast-schedules?model=${encodeURIComponent(options.model)}`,
          JSON.stringify(body),
          options.idempotencyKey ?? randomUUID(),
        );
      } catch (error) {
        throw error instanceof ApiError ? error.withPaths(describeCreatePath(options)) : error;
      }
      if (options.json) return void process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
      const id = created.schedule_id;
      const next = created.paused ? `paused; start it with \`forecast schedule resume ${id}\`` : `next run ${created.next_runs[0] ?? 'none (past its end)'}`;
      process.stderr.write(`created schedule ${id}: ${whenText(created.spec)}, model ${created.model}; ${next}\n`);
      process.stdout.write(`${id}\n`);
      if (created.webhook?.secret) {
        process.stderr.write('the webhook secret signs every call (Forecast-Signature header); store it now, it is not shown again:\n');
        process.stdout.write(`webhook-secret ${created.webhook.secret}\n`);
      }
    });
}
