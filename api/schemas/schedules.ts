/**
 * The schemas of scheduled backtests (POST /v1-beta/forecast-schedules and below): what a client
 * sends to make or change a schedule, and what it reads back. One zod schema validates a request
 * and documents it in /openapi. Durations use the beta grammar (`5s`, `1h`, `1d`, `1w`).
 */
import { z } from 'zod';
import { parseDuration } from '../../engine/beta/duration.ts';
import { DurationText } from '../../engine/beta/query-fields.ts';
import { ScheduledBetaQuery } from '../../engine/beta/query-schema.ts';
import { Timestamp } from '../../engine/request-schema.ts';
import { METRIC_NAMES } from '../../store/results.ts';

/** Temporal's overlap policies, in the API's snake case. */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'cancel_other', 'terminate_other', 'allow_all'] as const;

const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/** A zone's canonical name: `utc` and `europe/berlin` are read as zones here, but Temporal's own table knows only `UTC` and `Europe/Berlin`. */
const canonicalZone = (zone: string): string => new Intl.DateTimeFormat('en', { timeZone: zone }).resolvedOptions().timeZone;

/** Five fields of digits, names, `*`, `,`, `-`, `/` and `?`: no seconds, no year, no `@every` macro, no comment. */
const FIVE_FIELDS = /^\s*[\w*,/?-]+(\s+[\w*,/?-]+){4}\s*$/;
const CronExpression = z
  .string()
  .regex(FIVE_FIELDS, { message: 'must be five fields: minute, hour, day of month, month and day of week (`0 6 * * 1`)' })
  .meta({ pattern: FIVE_FIELDS.source });

/** A duration of fixed length: calendar months have none, so a monthly cadence is a cron expression. */
const FixedDuration = DurationText.refine((text) => parseDuration(text)?.kind !== 'months', {
  message: 'months, quarters and years have no fixed length here: for a monthly cadence, write a cron expression',
}).meta({ pattern: '^[1-9][0-9]{0,5}(s|min|h|d|w)$', example: '1d' });

export const ScheduleSpec = z
  .strictObject({
    cron: z
      .union([CronExpression, z.array(CronExpression).min(1).max(10)])
      .optional()
      .meta({ description: 'Cron expression(s), five fields (`0 6 * * 1`: Mondays at 06:00), in `time_zone`.' }),
    interval: FixedDuration.optional().meta({ description: 'A run every this long (`5s`, `1h`, `1d`, `1w`), counted from the Unix epoch.' }),
    time_zone: z
      .string()
      .refine(isTimeZone, { message: 'is not an IANA time zone (such as Europe/Berlin or UTC)' })
      .transform(canonicalZone)
      .default('UTC')
      .meta({ description: 'IANA time zone of the cron expressions; default UTC.' }),
    start_at: Timestamp.optional().meta({ description: 'No run before this time.' }),
    end_at: Timestamp.optional().meta({ description: 'No run after this time.' }),
  })
  .superRefine((spec, ctx) => {
    if ((spec.cron === undefined) === (spec.interval === undefined))
      ctx.addIssue({ code: 'custom', path: [spec.cron === undefined ? 'cron' : 'interval'], message: 'give exactly one of cron and interval' });
    if (spec.start_at && spec.end_at && Date.parse(spec.end_at) <= Date.parse(spec.start_at))
      ctx.addIssue({ code: 'custom', path: ['end_at'], message: 'must be after start_at' });
  })
  // The first rule, as the document states it.
  .meta({ id: 'ScheduleSpec', description: 'Give exactly one of cron and interval.' });
export type ScheduleSpec = z.output<typeof ScheduleSpec>;

const WebhookInput = z
  .strictObject({
    url: z
      .string()
      .regex(/^https?:\/\/[A-Za-z0-9.[\]:-]+(\/\S*)?$/, 'must be an http or https URL')
      .meta({ description: "Called with each run's summary; its host must be on the server's SCHEDULE_WEBHOOK_HOSTS." }),
    secret: z.string().min(16).max(256).optional().meta({
      description: 'Signs every call (HMAC-SHA256, `Forecast-Signature` header). Omitted: the server makes one and returns it once, in the answer that set it.',
    }),
  })
  .meta({ id: 'ScheduleWebhookInput' });

export const Alert = z
  .strictObject({
    metric: z.enum(METRIC_NAMES).meta({ description: 'A pooled metric of every run.' }),
    above: z.number().meta({ description: 'A run whose metric is above this (for any model and target) is marked `alerted`, and its webhook call says so.' }),
  })
  .meta({ id: 'ScheduleAlert' });

const Overlap = z.enum(OVERLAP_POLICIES).meta({
  description:
    'What happens when a run is due while the last one still runs: `skip` (default) it, buffer one or all, cancel or terminate the running one, or allow both.',
});
/** Temporal reads any shorter catch-up window as 10 s: asking for less would be answered but not done. */
const CatchUpWindow = FixedDuration.refine(
  (text) => {
    const d = parseDuration(text);
    return d?.kind !== 'fixed' || d.ms >= 10_000;
  },
  { message: 'must be at least 10s (the scheduler never waits less for a missed run)' },
).meta({ description: 'After an outage, a missed run still starts if it is at most this late; at least 10s, default 1d.' });

export const CreateScheduleBody = z
  .strictObject({
    query: ScheduledBetaQuery.meta({
      description: 'A beta query whose sources are locators (a bucket glob or a path under BETA_DATA_ROOT), read afresh by every run.',
    }),
    spec: ScheduleSpec,
    overlap: Overlap.default('skip'),
    catch_up_window: CatchUpWindow.default('1d'),
    paused: z.boolean().default(false),
    webhook: WebhookInput.optional(),
    alert: Alert.optional(),
  })
  .meta({ id: 'CreateSchedule' });
export type CreateScheduleBody = z.output<typeof CreateScheduleBody>;

export const PatchScheduleBody = z
  .strictObject({
    model: z.string().optional().meta({ description: 'Another model for the next runs.' }),
    query: CreateScheduleBody.shape.query.optional(),
    spec: ScheduleSpec.optional(),
    overlap: Overlap.optional(),
    catch_up_window: CatchUpWindow.optional(),
    paused: z.boolean().optional(),
    webhook: WebhookInput.nullable().optional().meta({ description: 'null removes the webhook.' }),
    alert: Alert.nullable().optional().meta({ description: 'null removes the alert.' }),
  })
  .meta({ id: 'PatchSchedule' });
export type PatchScheduleBody = z.output<typeof PatchScheduleBody>;
export type ScheduledQuery = z.output<typeof ScheduledBetaQuery>;

export const ScheduleIdParams = z.strictObject({ schedule_id: z.string() });

const ErrorBody = z.object({ code: z.string(), message: z.string() });
const PooledMetrics = z
  .object({
    model: z.string(),
    target: z.string().nullable(),
    scored_steps: z.int(),
    mae: z.number().nullable(),
    mape: z.number().nullable(),
    crps: z.number().nullable(),
    wape: z.number().nullable(),
    scaled_bias: z.number().nullable(),
  })
  .meta({ id: 'PooledMetrics', description: 'Accuracy pooled over every scored step of a run, per model and target.' });

/** A spec as answered: cron always a list, the time zone always given. */
const ScheduleSpecAnswer = z
  .object({
    cron: z.array(z.string()).optional(),
    interval: z.string().optional(),
    time_zone: z.string(),
    start_at: z.string().optional(),
    end_at: z.string().optional(),
  })
  .meta({ id: 'ScheduleSpecAnswer' });
export type ScheduleSpecAnswer = z.output<typeof ScheduleSpecAnswer>;

export const ScheduleResponse = z
  .object({
    schedule_id: z.string(),
    model: z.string(),
    query: z.unknown(),
    spec: ScheduleSpecAnswer,
    overlap: z.enum(OVERLAP_POLICIES),
    catch_up_window: z.string(),
    paused: z.boolean(),
    webhook: z
      .object({ url: z.string(), secret: z.string().optional().meta({ description: 'Only in the answer that set it, when the server made it.' }) })
      .nullable(),
    alert: Alert.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    next_runs: z.array(z.string()).meta({ description: 'The next times a run is due (none while paused), ISO 8601 UTC.' }),
    overlap_skipped: z.int().meta({ description: 'Runs skipped so far because the last one was still going (overlap `skip`).' }),
  })
  .meta({ id: 'Schedule' });
export type ScheduleResponse = z.output<typeof ScheduleResponse>;

export const ScheduleList = z.object({ schedules: z.array(ScheduleResponse) }).meta({ id: 'ScheduleList' });

export const ScheduledRun = z
  .object({
    job_id: z.string().meta({ description: 'An ordinary beta job: read it at /v1-beta/forecast-jobs/{job_id}.' }),
    scheduled_at: z.string(),
    started_at: z.string(),
    finished_at: z.string().nullable(),
    status: z.enum(['in_progress', 'completed', 'failed']),
    error: ErrorBody.nullable(),
    metrics: z.array(PooledMetrics),
    alerted: z.boolean().nullable().meta({
      description:
        "Whether the alert's metric crossed its threshold (false where no step was scored); null without an alert, or for a run that did not complete.",
    }),
  })
  .meta({ id: 'ScheduledRun' });
export type ScheduledRun = z.output<typeof ScheduledRun>;

export const ScheduledRunList = z.object({ schedule_id: z.string(), runs: z.array(ScheduledRun) }).meta({ id: 'ScheduledRunList' });

export const DeletedSchedule = z.object({ schedule_id: z.string(), status: z.literal('deleted') }).meta({ id: 'ScheduleDeleted' });
export const TriggeredSchedule = z.object({ schedule_id: z.string(), status: z.literal('triggered') }).meta({ id: 'ScheduleTriggered' });
