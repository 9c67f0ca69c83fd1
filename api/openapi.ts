/**
 * The OpenAPI 3.1 document served at GET /openapi, generated from the same zod schemas that
 * validate requests. Each route module declares its own paths beside its handlers; this module
 * only assembles them, in the order the document lists them.
 */
import { createDocument } from 'zod-openapi';
import { availableModels, MODEL_NAMES } from '../models/contract/model-registry.ts';
import type { ModelSettings } from '../models/contract/model-interface.ts';
import { resultViewPaths } from './dashboard/result-routes.ts';
import { betaJobPaths } from './routes/beta-jobs.ts';
import { betaPaths } from './routes/beta.ts';
import { forecastPaths } from './routes/forecast.ts';
import { jobPaths } from './routes/jobs.ts';
import { modelPaths } from './routes/models.ts';
import { operationsPaths } from './routes/operations.ts';
import { schedulePaths } from './routes/schedules.ts';
import { warmupPaths } from './routes/warmup.ts';
import { betaModelQuery, ModelQuery } from './schemas/query.ts';
import { jsonResponse, shuttingDown } from './schemas/responses.ts';

/**
 * The document for a server's models. `runnableModels`: the models this server runs now, the
 * values `model` lists (api/schemas/query.ts).
 */
export function buildOpenApiDocument(defaultModel: string, runnableModels: readonly string[] = MODEL_NAMES): ReturnType<typeof createDocument> {
  const query = ModelQuery(defaultModel, runnableModels);
  const betaQuery = betaModelQuery(runnableModels);
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
      ...forecastPaths(query),
      ...jobPaths(query),
      ...warmupPaths(query),
      ...modelPaths(),
      ...betaPaths(betaQuery),
      ...betaJobPaths(betaQuery),
      ...schedulePaths(betaQuery),
      ...resultViewPaths(),
      // This document's own route (api/server.ts).
      '/openapi': {
        get: {
          operationId: 'openapi',
          summary: 'This document.',
          security: [],
          responses: { '200': jsonResponse('OpenAPI 3.1 document.', { type: 'object' }), ...shuttingDown },
        },
      },
      ...operationsPaths(),
    },
  });
}

/**
 * GET /openapi's document for this server: rebuilt when the models it runs change (a foundation
 * model installed into MODELS_DIR while it runs), since the `model` parameter lists exactly those.
 */
export function currentOpenApiDocument(defaultModel: string, models: ModelSettings): () => ReturnType<typeof createDocument> {
  let built: { runnable: string; document: ReturnType<typeof createDocument> } | undefined;
  return () => {
    const runnable = availableModels(models);
    if (built?.runnable !== runnable.join()) built = { runnable: runnable.join(), document: buildOpenApiDocument(defaultModel, runnable) };
    return built.document;
  };
}
