import type { FastifyInstance } from 'fastify';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { locatorSource } from '../../engine/beta/locator.ts';
import type { LocatorConfig } from '../../engine/beta/locator.ts';
import { resolveBetaQuery } from '../../engine/beta/resolved-query.ts';
import { checkBetaQueryAgainstModel } from '../../engine/beta/run.ts';
import type { ScheduleRecord } from '../../store/schedule-records.ts';
import { withoutBodies } from '../bodyless-routes.ts';
import { idempotencyKey, IdempotentSubmissions, REPLAYED_HEADER, requestFingerprint } from '../idempotent-submissions.ts';
import type { JobService } from '../jobs/job-service.ts';
import { BETA_ROOTS, type FieldRoots } from '../problem.ts';
import type { QuotaPolicy } from '../quotas.ts';
import { ScheduleService, type ScheduleInput } from '../schedules/schedule-service.ts';
import type { betaModelQuery } from '../schemas/query.ts';
import { BetaModelQuery, NoQuery } from '../schemas/query.ts';
import { IdempotencyHeader, submitErrors } from '../schemas/jobs.ts';
import {
  BODY_ERRORS,
  ERRORS,
  IGNORED_BODY_ERROR,
  JSON_BODY_MALFORMED,
  jsonResponse,
  problemResponse,
  dependencyErrors,
  retryLaterResponse,
} from '../schemas/responses.ts';
import {
  CreateScheduleBody,
  DeletedSchedule,
  PatchScheduleBody,
  TriggeredSchedule,
  ScheduledRunList,
  ScheduleIdParams,
  ScheduleList,
  ScheduleResponse,
  type ScheduledQuery,
} from '../schemas/schedules.ts';
import { parseOr422 } from '../validation.ts';
import type { ScheduleConfig } from '../../config.ts';
import type { ModelSettings } from '../../models/contract/model-interface.ts';
import { refuseReservedIdentifiers } from './beta-jobs.ts';

/**
 * Scheduled backtests (docs/api.md, "Scheduled backtests"): a beta query over locators, run on a
 * Temporal schedule as an ordinary beta job each time. The same rules as for jobs: problem+json
 * naming the field, 403 and 404 per principal, `Idempotency-Key` on create, a quota per principal.
 */
export const SCHEDULES = '/v1-beta/forecast-schedules';

/** In a PATCH the model is a body field; in a create it is the `?model=` parameter, as for every beta call. */
const PATCH_ROOTS: FieldRoots = { ...BETA_ROOTS, model: 'body.model' };

export interface ScheduleRouteOptions {
  jobs: JobService;
  quotas: QuotaPolicy;
  settings: ScheduleConfig;
  locator: LocatorConfig;
  models: ModelSettings;
  idempotencyKeyTtlMs: number;
}

/**
 * What a run needs, checked now so that a schedule never holds a query its runs would refuse:
 * the model can run it, its identifiers can name result columns, and its sources are locators
 * this server reads. Whether a locator matches files is left to each run: data may come later.
 */
function checkScheduledQuery(model: string, query: ScheduledQuery, opts: ScheduleRouteOptions): void {
  const resolved = resolveBetaQuery(query);
  checkBetaQueryAgainstModel(resolved, model, opts.models);
  refuseReservedIdentifiers(resolved);
  const sources = [
    { source: query.input.source, path: ['input', 'source'] },
    ...(query.covariates ?? []).map((c, i) => ({ source: c.schema.source, path: ['covariates', i, 'schema', 'source'] })),
  ];
  // The schema admits locator strings only; the type, shared with the upload form, does not say so.
  for (const { source, path } of sources) if (typeof source === 'string') locatorSource(source, opts.locator, { root: 'request', path });
}

export function scheduleRoutes(app: FastifyInstance, opts: ScheduleRouteOptions): void {
  const schedules = new ScheduleService(opts.jobs, opts.settings);
  // Once serving, every stored schedule is put back in Temporal if it lost it; in the background, so a slow Temporal delays no start.
  app.addHook('onReady', async () => {
    void schedules.ensureAll().then(
      (failed) => failed.forEach(({ scheduleId, error }) => app.log.warn({ err: error, scheduleId }, 'schedule not ensured at start')),
      (error: unknown) => app.log.warn({ err: error }, 'schedules not ensured at start'),
    );
  });
  const store = opts.jobs.store;
  const submissions = new IdempotentSubmissions(store.idempotency, async (id) => (await store.schedules.get(id)) !== null, opts.idempotencyKeyTtlMs);
  /** The schedule's id; these routes take no query parameters, and refuse one (a `?limit=` would otherwise seem obeyed). */
  const params = (request: { params: unknown; query: unknown }) => {
    parseOr422(NoQuery, request.query, 'query');
    return parseOr422(ScheduleIdParams, request.params, 'path').schedule_id;
  };

  app.post(SCHEDULES, { config: { fieldRoots: BETA_ROOTS } }, async (request, reply) => {
    const key = idempotencyKey(request);
    const { model } = parseOr422(BetaModelQuery, request.query, 'query');
    const body = parseOr422(CreateScheduleBody, request.body, 'body');
    checkScheduledQuery(model, body.query, opts);
    if (body.webhook) schedules.checkWebhook(body.webhook.url);
    const input: ScheduleInput = {
      model,
      query: body.query,
      spec: body.spec,
      overlap: body.overlap,
      catch_up_window: body.catch_up_window,
      paused: body.paused,
      webhook: body.webhook ?? null,
      alert: body.alert ?? null,
    };
    const fingerprint = requestFingerprint({ kind: 'schedule', query: request.query, body: request.body });
    let created: ScheduleResponse | undefined;
    const limit = opts.quotas.of(request.principal).schedules;
    const { jobId: id, replayed } = await submissions.submit(request.principal, key, fingerprint, async (id) => {
      created = await schedules.create(request.principal, input, limit, id);
      return created.schedule_id;
    });
    if (replayed) reply.header(REPLAYED_HEADER, 'true');
    reply.code(201).header('location', `${SCHEDULES}/${id}`);
    return created ?? schedules.replayCreate(id, request.principal, body.webhook !== undefined && body.webhook.secret === undefined);
  });

  app.get(SCHEDULES, async (request) => {
    parseOr422(NoQuery, request.query, 'query');
    return { schedules: await schedules.list(request.principal) };
  });

  app.get(`${SCHEDULES}/:schedule_id`, async (request) => schedules.get(params(request), request.principal));

  app.patch(`${SCHEDULES}/:schedule_id`, { config: { fieldRoots: PATCH_ROOTS } }, async (request) => {
    const id = params(request);
    const patch = parseOr422(PatchScheduleBody, request.body, 'body');
    if (patch.webhook) schedules.checkWebhook(patch.webhook.url);
    return schedules.update(id, request.principal, (before: ScheduleRecord): ScheduleInput => {
      const model = patch.model ?? before.model;
      const query = patch.query ?? (before.query as ScheduledQuery);
      if (patch.model !== undefined || patch.query !== undefined) checkScheduledQuery(model, query, opts);
      return {
        model,
        query,
        spec: patch.spec ?? before.spec,
        overlap: patch.overlap ?? before.overlap,
        catch_up_window: patch.catch_up_window ?? before.catch_up_window,
        paused: patch.paused ?? before.paused,
        webhook: patch.webhook === undefined ? before.webhook : patch.webhook,
        alert: patch.alert === undefined ? before.alert : patch.alert,
      };
    });
  });

  withoutBodies(app, (scope) => {
    scope.post(`${SCHEDULES}/:schedule_id/trigger`, async (request, reply) => {
      const id = params(request);
      await schedules.trigger(id, request.principal);
      reply.code(202);
      return { schedule_id: id, status: 'triggered' };
    });

    scope.delete(`${SCHEDULES}/:schedule_id`, async (request) => {
      const id = params(request);
      await schedules.remove(id, request.principal);
      return { schedule_id: id, status: 'deleted' };
    });
  });

  app.get(`${SCHEDULES}/:schedule_id/runs`, async (request) => {
    const id = params(request);
    return { schedule_id: id, runs: await schedules.runs(id, request.principal) };
  });
}

/** What a change, trigger or deletion of one schedule may also answer: they take turns on every replica. */
const scheduleBusyError = {
  '429': retryLaterResponse(
    "So many changes and triggers of this schedule arrive at once that they cannot take their turns in time (`too_many_submissions`), the rate limit is exceeded (`rate_limited`), or too many failed authentications came from the client's address (`too_many_failed_authentications`); the `Retry-After` header gives the seconds to wait.",
  ),
};

const scheduleErrors = {
  '403': problemResponse('The schedule belongs to another principal (`forbidden`).'),
  '404': problemResponse('No such schedule (`not_found`).'),
  ...dependencyErrors,
};

/** Scheduled backtests in /openapi. */
export function schedulePaths(query: ReturnType<typeof betaModelQuery>): ZodOpenApiPathsObject {
  const path = { path: ScheduleIdParams };
  return {
    [SCHEDULES]: {
      post: {
        operationId: 'createSchedule',
        summary: 'Schedule a beta backtest (beyond the reference): every run is an ordinary beta job over the data its locators find then.',
        requestParams: { query, header: IdempotencyHeader },
        requestBody: { required: true, content: { 'application/json': { schema: CreateScheduleBody } } },
        responses: {
          '201': {
            ...jsonResponse('The schedule, with its next run times; `Location` names it.', ScheduleResponse),
            headers: {
              Location: { description: "The schedule's path: `/v1-beta/forecast-schedules/{schedule_id}`.", schema: { type: 'string' } },
              'Idempotent-Replayed': {
                description: '`true` when the schedule was made by an earlier request with the same Idempotency-Key.',
                schema: { type: 'string', enum: ['true'] },
              },
            } as const,
          },
          ...BODY_ERRORS,
          ...ERRORS,
          ...dependencyErrors,
          ...submitErrors(JSON_BODY_MALFORMED),
          '429': problemResponse(
            'The caller keeps as many schedules as its `schedules` quota allows (`quota_exceeded`), so many of its schedules arrive at once that they cannot be counted in time (`too_many_submissions`, with `Retry-After`), or the rate limit is exceeded (`rate_limited`).',
          ),
        },
      },
      get: {
        operationId: 'listSchedules',
        summary: "The caller's schedules, oldest first, each with its next run times.",
        responses: { '200': jsonResponse('The schedules.', ScheduleList), ...ERRORS, ...dependencyErrors },
      },
    },
    [`${SCHEDULES}/{schedule_id}`]: {
      get: {
        operationId: 'getSchedule',
        summary: 'One schedule, with its next run times.',
        requestParams: path,
        responses: { '200': jsonResponse('The schedule.', ScheduleResponse), ...ERRORS, ...scheduleErrors },
      },
      patch: {
        operationId: 'updateSchedule',
        summary: 'Change the spec, the query, the model, the policies, the webhook or the alert; pause or resume with `paused`.',
        requestParams: path,
        requestBody: { required: true, content: { 'application/json': { schema: PatchScheduleBody } } },
        responses: { '200': jsonResponse('The schedule as changed.', ScheduleResponse), ...BODY_ERRORS, ...ERRORS, ...scheduleErrors, ...scheduleBusyError },
      },
      delete: {
        operationId: 'deleteSchedule',
        summary: 'Delete the schedule. Runs already made, their jobs and their results stay.',
        requestParams: path,
        responses: { '200': jsonResponse('Deleted.', DeletedSchedule), ...IGNORED_BODY_ERROR, ...ERRORS, ...scheduleErrors, ...scheduleBusyError },
      },
    },
    [`${SCHEDULES}/{schedule_id}/trigger`]: {
      post: {
        operationId: 'triggerSchedule',
        summary: 'Start a run now, beside any run in progress.',
        requestParams: path,
        responses: {
          '202': jsonResponse('The run was asked for.', TriggeredSchedule),
          ...IGNORED_BODY_ERROR,
          ...ERRORS,
          ...scheduleErrors,
          ...scheduleBusyError,
        },
      },
    },
    [`${SCHEDULES}/{schedule_id}/runs`]: {
      get: {
        operationId: 'listScheduleRuns',
        summary: "The schedule's runs, newest first: job id, scheduled and actual time, status and pooled metrics.",
        requestParams: path,
        responses: { '200': jsonResponse('The runs.', ScheduledRunList), ...ERRORS, ...scheduleErrors },
      },
    },
  };
}
