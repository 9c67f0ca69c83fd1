import type { FastifyInstance } from 'fastify';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import type { Engine } from '../../engine/engine.ts';
import { runForecast } from '../../engine/forecast.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { ForecastResponseSchema } from '../../engine/response-schema.ts';
import { requireSeriesWithin, type QuotaPolicy } from '../quotas.ts';
import { ModelQuery } from '../schemas/query.ts';
import { BODY_ERRORS, ERRORS, jsonResponse } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';

/** POST /forecast (reference 4.1): validated, then answered synchronously with `completed`. */
export async function forecastRoutes(app: FastifyInstance, opts: { defaultModel: string; engine: Engine; quotas: QuotaPolicy }): Promise<void> {
  const querySchema = ModelQuery(opts.defaultModel);
  app.post('/forecast', async (request) => {
    const query = parseOr422(querySchema, request.query, 'query');
    const body = parseOr422(ForecastRequest, request.body, 'body');
    requireSeriesWithin(opts.quotas.of(request.principal), body.series.length);
    return runForecast(opts.engine, body, query.model);
  });
}

export function forecastPaths(query: ReturnType<typeof ModelQuery>): ZodOpenApiPathsObject {
  return {
    '/forecast': {
      post: {
        operationId: 'forecast',
        summary: 'Forecast one or more series synchronously, from the latest date or from several forecast creation dates.',
        requestParams: { query },
        requestBody: { required: true, content: { 'application/json': { schema: ForecastRequest } } },
        responses: { '200': jsonResponse('Completed forecast.', ForecastResponseSchema), ...BODY_ERRORS, ...ERRORS },
      },
    },
  };
}
