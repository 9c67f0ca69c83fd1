import { createDocument } from 'zod-openapi';
import { ForecastRequest } from '../engine/request-schema.ts';
import { ForecastResponseSchema } from '../engine/response-schema.ts';
import { ProblemDetails } from './problem.ts';
import { ModelQuery } from './query-schemas.ts';
import { WarmupResponse } from './routes/warmup.ts';

const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemDetails } } });

const ERRORS = {
  '401': problemResponse('Missing or invalid API key (`invalid_auth`).'),
  '422': problemResponse('The body or a parameter failed validation (`invalid_request`), or the model cannot run here (`model_unavailable`).'),
  '429': problemResponse('Rate limit exceeded (`rate_limited`); the `Retry-After` header gives the seconds to wait.'),
  '500': problemResponse('Unexpected server-side failure (`forecast_failed`, `internal_error`).'),
};

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function buildOpenApiDocument(defaultModel: string): ReturnType<typeof createDocument> {
  const query = ModelQuery(defaultModel);
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Forecasting Service API',
      version: '1.0.0',
      description: 'Time-series forecasting with statistical and foundation models behind one interface. Errors are RFC 9457 problem+json.',
    },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key as `Authorization: Bearer <API_KEY>`.' },
        apiKeyBearer: { type: 'http', scheme: 'bearer', description: 'The same API key; the reference declares two bearer schemes and either is accepted.' },
      },
    },
    security: [{ bearerAuth: [] }, { apiKeyBearer: [] }],
    paths: {
      '/forecast': {
        post: {
          operationId: 'forecast',
          summary: 'Forecast one or more series synchronously, from the latest date or from several forecast creation dates.',
          requestParams: { query },
          requestBody: { required: true, content: { 'application/json': { schema: ForecastRequest } } },
          responses: { '200': { description: 'Completed forecast.', content: { 'application/json': { schema: ForecastResponseSchema } } }, ...ERRORS },
        },
      },
      '/warmup': {
        get: {
          operationId: 'warmup',
          summary: 'Load a model ahead of traffic.',
          requestParams: { query },
          responses: { '200': { description: 'The model is loaded.', content: { 'application/json': { schema: WarmupResponse } } }, ...ERRORS },
        },
      },
      '/openapi': {
        get: {
          operationId: 'openapi',
          summary: 'This document.',
          security: [],
          responses: { '200': { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    },
  });
}
