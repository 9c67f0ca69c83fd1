import type { ScheduledRun, ScheduleResponse, ScheduleSpecAnswer } from '../../api/schemas/schedules.ts';
import type { MetricName } from '../../store/result-queries.ts';
import { table } from './table.ts';

/**
 * Scheduled backtests as `forecast schedule list|show` print them: the answers of
 * /v1-beta/forecast-schedules as the CLI reads them, and their text. Tables and settings go to
 * stdout, one schedule or run per line, so that they can be read by a person or by `grep`.
 */

export type Schedule = ScheduleResponse;
export type { ScheduledRun };
type ScheduleSpec = ScheduleSpecAnswer;

/** `cron 0 6 * * 1 in Europe/Berlin`, `every 1h in UTC`, with the window when it has one. */
export function whenText(spec: ScheduleSpec): string {
  const cadence = spec.cron?.length ? `cron ${spec.cron.join('; ')}` : `every ${spec.interval}`;
  const window = [spec.start_at && `from ${spec.start_at}`, spec.end_at && `until ${spec.end_at}`].filter(Boolean).join(' ');
  return `${cadence} in ${spec.time_zone}${window ? `, ${window}` : ''}`;
}

const stateText = (s: Schedule) => (s.paused ? 'paused' : 'active');

export function schedulesTable(schedules: Schedule[]): string {
  const header = ['SCHEDULE ID', 'MODEL', 'STATE', 'NEXT RUN', 'WHEN'];
  const rows = schedules.map((s) => [s.schedule_id, s.model, stateText(s), s.next_runs[0] ?? '-', whenText(s.spec)]);
  return table([header, ...rows]);
}

/** The metric `show` prints by default: the one the alert watches, else CRPS where runs have it, else MAE. */
export function defaultMetric(schedule: Schedule, runs: ScheduledRun[]): string {
  if (schedule.alert) return schedule.alert.metric;
  return runs.some((r) => r.metrics.some((m) => m.crps !== null && m.crps !== undefined)) ? 'crps' : 'mae';
}

/** Four significant digits, as the dashboard shows metrics. */
const formatValue = (value: number | null | undefined) => (value === null || value === undefined ? '-' : String(Number(value.toPrecision(4))));

/** A run's metric: its value, or `target=value` for each model and target when it pooled several. */
function metricCell(run: ScheduledRun, metric: string): string {
  const value = (m: ScheduledRun['metrics'][number]) => formatValue(m[metric as MetricName]);
  if (run.metrics.length === 0) return '-';
  if (run.metrics.length === 1) return value(run.metrics[0]);
  return run.metrics.map((m) => `${m.target ?? m.model}=${value(m)}`).join(' ');
}

function runStatus(run: ScheduledRun): string {
  return run.status === 'failed' ? `failed (${run.error?.code ?? 'unknown'})` : run.status;
}

/** The schedule's settings, then its runs (newest first) with one pooled metric each. */
export function scheduleReport(schedule: Schedule, runs: ScheduledRun[], metric: string, shown: number): string {
  const settings: [string, string][] = [
    ['model', schedule.model],
    ['when', whenText(schedule.spec)],
    ['overlap', `${schedule.overlap} (${schedule.overlap_skipped} skipped so far); catch-up window ${schedule.catch_up_window}`],
    ['alert', schedule.alert ? `${schedule.alert.metric} above ${schedule.alert.above}` : '-'],
    ['webhook', schedule.webhook?.url ?? '-'],
    ['created', schedule.created_at],
    ['next runs', schedule.paused ? 'none while paused' : schedule.next_runs.slice(0, 3).join(', ') || 'none'],
  ];
  const width = Math.max(...settings.map(([name]) => name.length));
  const lines = [`schedule ${schedule.schedule_id}: ${stateText(schedule)}`, ...settings.map(([name, value]) => `  ${name.padEnd(width)}  ${value}`)];
  if (runs.length === 0) return [...lines, 'no runs yet'].join('\n');
  const listed = runs.slice(0, shown);
  lines.push(`runs: ${runs.length}, newest first${listed.length < runs.length ? ` (the ${listed.length} newest shown; --runs N for more)` : ''}`);
  const header = ['SCHEDULED', 'JOB ID', 'STATUS', metric.toUpperCase(), 'ALERTED', 'ERROR'];
  const rows = listed.map((r) => [
    r.scheduled_at,
    r.job_id,
    runStatus(r),
    metricCell(r, metric),
    r.alerted === null ? '-' : r.alerted ? 'yes' : 'no',
    r.error?.message ?? '',
  ]);
  return [...lines, table([header, ...rows])].join('\n');
}
