import type { FastifyInstance } from 'fastify';
import { runForecast } from '../../engine/forecast.ts';
import { ForecastRequest } from '../../engine/request-schema.ts';
import { parseOr422 } from '../errors-plugin.ts';
import { ModelQuery } from '../query-schemas.ts';

/** POST /forecast (reference 4.1): validated, then answered synchronously with `completed`. */
export async function forecastRoutes(app: FastifyInstance, opts: { defaultModel: string }): Promise<void> {
  const querySchema = ModelQuery(opts.defaultModel);
  app.post('/forecast', async (request) => {
    const query = parseOr422(querySchema, request.query, 'query');
    const body = parseOr422(ForecastRequest, request.body, 'body');
    return runForecast(body, query.model);
  });
}
