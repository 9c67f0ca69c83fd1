import type { FastifyInstance } from 'fastify';
import type { ZodOpenApiOperationObject, ZodOpenApiPathItemObject } from 'zod-openapi';
import type { JobKind } from '../../store/layout.ts';
import { withoutBodies } from '../bodyless-routes.ts';
import type { JobService } from '../jobs/job-service.ts';
import { HttpError } from '../problem.ts';
import { JobDeleted, JobIdParams } from '../schemas/jobs.ts';
import { NoQuery } from '../schemas/query.ts';
import { ERRORS, IGNORED_BODY_ERROR, jobErrors, jsonResponse, parquetResponse, problemResponse } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';

/** Cancel, delete and the Parquet downloads, the same for both kinds of job (each under its own prefix); none reads a body. */
export function jobControlRoutes(parent: FastifyInstance, prefix: string, jobs: JobService, kind: JobKind): void {
  withoutBodies(parent, (app) => controlRoutes(app, prefix, jobs, kind));
}

function controlRoutes(app: FastifyInstance, prefix: string, jobs: JobService, kind: JobKind): void {
  app.post(`${prefix}/:job_id/cancel`, async (request) => {
    const { job_id } = parseOr422(JobIdParams, request.params, 'path');
    parseOr422(NoQuery, request.query, 'query');
    await jobs.meta(job_id, request.principal, kind);
    const before = await jobs.state(job_id);
    if (before.status !== 'in_progress')
      throw new HttpError(409, 'job_finished', `job '${job_id}' has already finished (${before.status}); there is nothing to cancel`);
    await jobs.cancel(job_id);
    return { job_id, status: 'cancelling' };
  });

  app.delete(`${prefix}/:job_id`, async (request) => {
    const { job_id } = parseOr422(JobIdParams, request.params, 'path');
    parseOr422(NoQuery, request.query, 'query');
    await jobs.meta(job_id, request.principal, kind);
    await jobs.remove(job_id);
    return { job_id, status: 'deleted' };
  });

  for (const table of ['predictions', 'metrics'] as const) {
    app.get(`${prefix}/:job_id/${table}.parquet`, async (request, reply) => {
      const { job_id } = parseOr422(JobIdParams, request.params, 'path');
      parseOr422(NoQuery, request.query, 'query');
      const meta = await jobs.meta(job_id, request.principal, kind);
      const state = await jobs.state(job_id);
      if (state.status !== 'completed')
        throw new HttpError(409, 'job_not_completed', `job '${job_id}' is ${state.status}; its results can be downloaded once it has completed`);
      const file = await jobs.store.export(meta, table);
      if (!file) throw new HttpError(404, 'not_found', `job '${job_id}' has no ${table}`);
      return reply.type('application/vnd.apache.parquet').header('content-disposition', `attachment; filename="${job_id}-${table}.parquet"`).send(file);
    });
  }
}

/** Deleting a job, the same for both kinds. */
export function deleteOperation(id: string, deprecated: boolean): ZodOpenApiOperationObject {
  return {
    operationId: `${id}DeleteJob`,
    deprecated,
    summary: 'Delete a job: cancels it if it runs, then removes its inputs and results. Afterwards the id is unknown (404).',
    requestParams: { path: JobIdParams },
    responses: {
      '200': jsonResponse('Deleted.', JobDeleted),
      ...IGNORED_BODY_ERROR,
      ...ERRORS,
      ...jobErrors,
    },
  };
}

/** Cancel and the Parquet downloads, the same for both kinds of job. */
export function controlPaths(prefix: string, id: string, deprecated: boolean): [string, ZodOpenApiPathItemObject][] {
  const path = { path: JobIdParams };
  return [
    [
      `${prefix}/{job_id}/cancel`,
      {
        post: {
          operationId: `${id}CancelJob`,
          deprecated,
          summary: 'Cancel a running job; it ends as failed with code cancelled.',
          requestParams: path,
          responses: {
            '200': jsonResponse('Cancellation requested.', { type: 'object' }),
            '409': problemResponse('The job has already finished (`job_finished`).'),
            ...IGNORED_BODY_ERROR,
            ...ERRORS,
            ...jobErrors,
          },
        },
      },
    ],
    ...(['predictions', 'metrics'] as const).map((table): [string, ZodOpenApiPathItemObject] => [
      `${prefix}/{job_id}/${table}.parquet`,
      {
        get: {
          operationId: `${id}Download${table[0].toUpperCase()}${table.slice(1)}`,
          deprecated,
          summary: `The completed job's ${table} as one Parquet file.`,
          requestParams: path,
          responses: {
            '200': parquetResponse(`${table} (Parquet)`),
            '409': problemResponse('The job has not completed (`job_not_completed`).'),
            ...ERRORS,
            ...jobErrors,
          },
        },
      },
    ]),
  ];
}
