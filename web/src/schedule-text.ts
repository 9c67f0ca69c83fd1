import type { ScheduleSpec } from './types.ts';

/**
 * A schedule's timing in words, for the list and the schedule's page: its cadence, the window it
 * runs in, and run times in its own time zone (cron expressions are read there, so a reader
 * checks them there).
 */

/** `cron 0 6 * * 1` (several separated by `;`), or `every 1d`. */
export function cadenceText(spec: ScheduleSpec): string {
  if (spec.cron && spec.cron.length > 0) return `cron ${spec.cron.join('; ')}`;
  return spec.interval ? `every ${spec.interval}` : '–';
}

/** `from … until …`, either end left out when open; empty when both are. */
export function windowText(spec: ScheduleSpec): string {
  const parts = [spec.start_at && `from ${spec.start_at}`, spec.end_at && `until ${spec.end_at}`].filter(Boolean);
  return parts.join(' ');
}

/** An instant as a wall clock of `zone` reads it: `Mon 2024-06-03 06:00`. */
export function zonedTime(ms: number, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: zone,
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('weekday')} ${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}`;
}
