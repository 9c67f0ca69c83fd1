import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { FieldError } from '../engine/errors.ts';

/** The error body of the reference (2.7, RFC 9457), served as application/problem+json. */
export const ProblemDetails = z
  .object({
    type: z.string().default('about:blank'),
    title: z.string(),
    status: z.int().min(400).max(599),
    code: z.string(),
    detail: z.string().nullable().default(null),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .nullable()
      .default(null),
  })
  .meta({ id: 'ProblemDetails' });

export type ProblemDetails = z.output<typeof ProblemDetails>;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problem(status: number, code: string, detail: string | null, errors: FieldError[] | null = null): ProblemDetails {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, code, detail, errors };
}

export function sendProblem(reply: FastifyReply, body: ProblemDetails): FastifyReply {
  return reply.code(body.status).type('application/problem+json').send(body);
}
