import type { Command } from 'commander';
import type { ClientConfig } from '../../config.ts';
import { clientFor, positiveInteger } from './options.ts';
import { createScheduleCommand } from './schedule-create.ts';
import { defaultMetric, scheduleReport, schedulesTable, type Schedule, type ScheduledRun } from './schedule-view.ts';

/**
 * `forecast schedule create|list|show|pause|resume|trigger|delete`: scheduled backtests over the
 * beta API (/v1-beta/forecast-schedules). Each run is an ordinary beta job. Results and tables go
 * to stdout, messages to stderr; a refusal exits 1 with its field paths, as every command does.
 */

const SCHEDULES = '/v1-beta/forecast-schedules';
const one = (id: string) => `${SCHEDULES}/${encodeURIComponent(id)}`;

export function scheduleCommands(program: Command, config: ClientConfig): void {
  const schedule = program.command('schedule').description('scheduled backtests: a beta query run on a cron expression or an interval');
  createScheduleCommand(schedule, config);

  schedule
    .command('list')
    .description('list your schedules: state, next run and timing')
    .option('--json', "print the service's answer as JSON")
    .action(async (options: { json?: boolean }, self: Command) => {
      const { schedules } = await clientFor(self, config).json<{ schedules: Schedule[] }>('GET', SCHEDULES);
      if (options.json) return void process.stdout.write(`${JSON.stringify(schedules, null, 2)}\n`);
      process.stdout.write(schedules.length === 0 ? 'no schedules\n' : `${schedulesTable(schedules)}\n`);
    });

  schedule
    .command('show')
    .description('a schedule, its next run times and its recent runs with a pooled metric each')
    .argument('<schedule_id>')
    .option('--runs <n>', 'show at most this many runs, newest first', positiveInteger, 10)
    .option('--metric <name>', "the pooled metric shown per run: mae, mape, crps, wape or scaled_bias (default: the alert's, else crps, else mae)")
    .option('--json', 'print the schedule and its runs as JSON')
    .action(async (id: string, options: { runs: number; metric?: string; json?: boolean }, self: Command) => {
      const client = clientFor(self, config);
      const [found, { runs }] = await Promise.all([client.json<Schedule>('GET', one(id)), client.json<{ runs: ScheduledRun[] }>('GET', `${one(id)}/runs`)]);
      if (options.json) return void process.stdout.write(`${JSON.stringify({ schedule: found, runs: runs.slice(0, options.runs) }, null, 2)}\n`);
      process.stdout.write(`${scheduleReport(found, runs, options.metric ?? defaultMetric(found, runs), options.runs)}\n`);
    });

  schedule
    .command('pause')
    .description('pause a schedule: no run until it is resumed (a trigger still runs one)')
    .argument('<schedule_id>')
    .action(async (id: string, _options: unknown, self: Command) => {
      await clientFor(self, config).json<Schedule>('PATCH', one(id), JSON.stringify({ paused: true }));
      process.stdout.write(`paused schedule ${id}\n`);
    });

  schedule
    .command('resume')
    .description('resume a paused schedule')
    .argument('<schedule_id>')
    .action(async (id: string, _options: unknown, self: Command) => {
      const resumed = await clientFor(self, config).json<Schedule>('PATCH', one(id), JSON.stringify({ paused: false }));
      process.stdout.write(`resumed schedule ${id}; next run ${resumed.next_runs[0] ?? 'none (past its end)'}\n`);
    });

  schedule
    .command('trigger')
    .description('start a run now, beside any run in progress')
    .argument('<schedule_id>')
    .action(async (id: string, _options: unknown, self: Command) => {
      await clientFor(self, config).json('POST', `${one(id)}/trigger`);
      process.stdout.write(`triggered a run of schedule ${id}\n`);
      process.stderr.write(`follow it with \`forecast schedule show ${id}\`\n`);
    });

  schedule
    .command('delete')
    .description('delete a schedule; the jobs of its runs and their results stay')
    .argument('<schedule_id>')
    .action(async (id: string, _options: unknown, self: Command) => {
      await clientFor(self, config).json('DELETE', one(id));
      process.stdout.write(`deleted schedule ${id}; the jobs of its runs and their results stay\n`);
    });
}
