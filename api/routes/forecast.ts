import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../engine/engine.ts';
import { runForecast } from '../../engine/forecast.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { requireSeriesWithin, type QuotaPolicy } from '../quotas.ts';
import { ModelQuery } from '../query-schemas.ts';
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
