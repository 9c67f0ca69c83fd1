import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import type { Engine } from '../../engine/engine.ts';
import { warmUpModel } from '../../engine/warmup.ts';
import { ModelQuery } from '../schemas/query.ts';
import { ERRORS, jsonResponse } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';

const WarmupResponse = z
  .object({
    model: z.string(),
    status: z.literal('ready'),
    load_time_ms: z.number().meta({ description: 'Time spent loading and initialising the model, in milliseconds.' }),
    cloud: z.string().nullable(),
    region: z.string().nullable(),
    execution_provider: z.string().nullable().meta({
      description:
        'Beyond the reference: for a model run by ONNX Runtime, the execution provider its sessions run on (`cpu`, `cuda`...; several, comma-separated, if the model threads differ). Null for the others.',
    }),
  })
  .meta({ id: 'WarmupResponse' });

/** GET /warmup (reference 4.4): loads the model ahead of traffic and says how long it took. */
export async function warmupRoutes(app: FastifyInstance, opts: { defaultModel: string; engine: Engine }): Promise<void> {
  const querySchema = ModelQuery(opts.defaultModel);
  app.get('/warmup', async (request): Promise<z.output<typeof WarmupResponse>> => {
    const query = parseOr422(querySchema, request.query, 'query');
    const { model, loadTimeMs, executionProvider } = await warmUpModel(opts.engine, query.model);
    return {
      model,
      status: 'ready',
      load_time_ms: Math.round(loadTimeMs * 1000) / 1000,
      cloud: query.cloud ?? null,
      region: query.region ?? null,
      execution_provider: executionProvider,
    };
  });
}

export function warmupPaths(query: ReturnType<typeof ModelQuery>): ZodOpenApiPathsObject {
  return {
    '/warmup': {
      get: {
        operationId: 'warmup',
        summary: 'Load a model ahead of traffic.',
        requestParams: { query },
        responses: { '200': jsonResponse('The model is loaded.', WarmupResponse), ...ERRORS },
      },
    },
  };
}
