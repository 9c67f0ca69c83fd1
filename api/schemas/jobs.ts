/**
 * The schemas of both kinds of job (forecast and beta): path and query parameters, what a
 * submission and a poll answer, and the Idempotency-Key header. One zod schema validates a request
 * and documents it in /openapi.
 */
import { z } from 'zod';
import type { ZodOpenApiResponseObject } from 'zod-openapi';
import { PredictionSchema } from '../../engine/response-schema.ts';
import { problemResponse, retryLaterResponse } from './responses.ts';

export const JobIdParams = z.strictObject({ job_id: z.string() });

export const JobPageQuery = z.strictObject({
  offset: z.coerce.number().int().min(0).default(0).meta({ description: 'First series to return (0-based).' }),
  limit: z.coerce.number().int().min(1).optional().meta({ description: 'Number of series to return; all when omitted.' }),
});

export const JobProgressSchema = z
  .object({ done: z.int(), total: z.int().nullable(), chunksDone: z.int(), chunks: z.int().nullable() })
  .nullable()
  .meta({ id: 'JobProgress', description: 'Forecasts done out of the total; null when no worker answered in time.' });

export const JobStatusResponse = z
  .object({
    job_id: z.string(),
    status: z.enum(['in_progress', 'completed', 'failed']),
    series: z.array(z.array(PredictionSchema)).nullable().meta({ description: 'As in the synchronous response; null unless completed.' }),
    progress: JobProgressSchema.optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    total_series: z.int().optional(),
    offset: z.int().optional(),
    limit: z.int().nullable().optional(),
  })
  .meta({ id: 'JobStatus' });

export const JobListQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

/** The caller's jobs, newest first: what each was, and its state as a poll reads it (without results). */
export const JobList = z
  .object({
    jobs: z.array(
      z.object({
        job_id: z.string(),
        kind: z.enum(['forecast', 'beta']),
        model: z.string(),
        created_at: z.string().meta({ description: 'When it was submitted (ISO 8601, UTC).' }),
        series: z.int().nullable().meta({ description: 'Series in the request; null for a beta job, whose series its schema logic finds.' }),
        forecasts: z.int().nullable().meta({ description: 'Forecasts it makes; null for a beta job.' }),
        status: z.enum(['in_progress', 'completed', 'failed']),
        progress: JobProgressSchema.optional(),
        error: z.object({ code: z.string(), message: z.string() }).optional(),
      }),
    ),
  })
  .meta({ id: 'JobList' });

export const JobSubmitted = z
  .object({
    job_id: z.string(),
    call_id: z.string().meta({ description: 'The same identifier, under the name the reference example uses.' }),
    status: z.literal('in_progress'),
  })
  .meta({ id: 'JobSubmitted' });

export const JobDeleted = z.object({ job_id: z.string(), status: z.literal('deleted') }).meta({ id: 'JobDeleted' });

/** The Idempotency-Key request header of job submissions. */
export const IdempotencyHeader = z.object({
  // The characters api/idempotent-submissions.ts accepts (visible ASCII but `"` and `\\`), bare or as a quoted string.
  'Idempotency-Key': z
    .string()
    .regex(/^(?:[\x21\x23-\x5b\x5d-\x7e]{1,255}|"[\x21\x23-\x5b\x5d-\x7e]{1,255}")$/)
    .optional()
    .meta({
      description:
        'Makes the submission idempotent: with the same key (per API key) and the same request, the service answers the same job instead of starting another, for IDEMPOTENCY_KEY_TTL (24 h by default); with another request, 422 `idempotency_key_reused`. 1-255 visible ASCII characters (a UUID, say), bare or as a quoted string.',
      example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    }),
});

/** What a job submission answers besides its body's errors and ERRORS. */
export const submitErrors = (malformed: string) => ({
  '400': problemResponse(
    `${malformed}; or the Idempotency-Key header is malformed (\`invalid_idempotency_key\`, \`errors[].path\` \`header.Idempotency-Key\`).`,
  ),
  '409': retryLaterResponse(
    'A request with the same Idempotency-Key is still creating its job (`idempotency_key_in_use`); retry after `Retry-After` to get that job.',
  ),
  '422': problemResponse(
    'The body or a parameter failed validation (`invalid_request`), the model cannot run here (`model_unavailable`), or the Idempotency-Key was used for another request (`idempotency_key_reused`).',
  ),
  '429': retryLaterResponse(
    "The caller has as many jobs in progress as its `concurrent_jobs` quota allows (`quota_exceeded`, the `limit` member names it; nothing was started), so many of its submissions arrive at once that they cannot be counted in time (`too_many_submissions`), the rate limit is exceeded (`rate_limited`), or too many failed authentications came from the client's address (`too_many_failed_authentications`). `Retry-After` gives the seconds to wait.",
  ),
});

/** A job submission's answer; `Idempotent-Replayed: true` when an earlier request with the same key created the job. */
export const submittedResponse: ZodOpenApiResponseObject = {
  description: 'The job was accepted (or, with an Idempotency-Key already used for the same request, the job that request created).',
  content: { 'application/json': { schema: JobSubmitted } },
  headers: {
    'Idempotent-Replayed': {
      description: '`true` when the job was created by an earlier request with the same Idempotency-Key.',
      schema: { type: 'string', enum: ['true'] },
    },
  },
};
