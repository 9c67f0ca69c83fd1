/**
 * GET /models and GET /models/{name} (beyond the reference): the catalogue clients pick models
 * from. Every known model, installed or not, with what it takes and allows here. No answer names
 * a server path; the install hint is for operators, in the log
 * (docs/decisions/070-model-catalogue.md, 071-no-server-paths-for-clients.md).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import type { Engine } from '../../engine/engine.ts';
import { describeModel, describeModels, type ModelDescription } from '../../models/contract/model-catalogue.ts';
import { MODEL_NAMES } from '../../models/contract/model-registry.ts';
import { HttpError } from '../problem.ts';
import { NoQuery } from '../schemas/query.ts';
import { ERRORS, jsonResponse, problemResponse } from '../schemas/responses.ts';
import { parseOr422 } from '../validation.ts';

const ModelInfo = z
  .object({
    name: z.string(),
    family: z.string().meta({ description: 'The line of models it belongs to: `ets` for aets, `timesfm` for both TimesFM versions.' }),
    kind: z.enum(['statistical', 'global', 'foundation']).meta({
      description:
        '`statistical`: fitted on each series alone; `global`: learns across the series of a request; `foundation`: a pretrained network run by ONNX Runtime.',
    }),
    installed: z.boolean().meta({ description: 'True when the model runs on this server now: the value to offer in a model picker.' }),
    export: z.enum(['verified', 'not_installed', 'failed_verification']).nullable().meta({
      description:
        'For a foundation model this server has an adapter for: whether its exported weights are installed and pass verification. Null for the others.',
    }),
    unavailable_reason: z
      .string()
      .nullable()
      .meta({ description: 'Why the model does not run here (what a 422 `model_unavailable` would say); null when it does.' }),
    covariates: z.array(z.enum(['historical', 'future', 'static', 'string', 'generated'])).meta({
      description:
        'Covariate kinds it takes: `hist_variables`, `future_variables`, `static_variables`, string (categorical) values, generated `covariates`. Empty: none.',
    }),
    quantiles: z.boolean().meta({ description: 'False when the model forecasts a point alone: every requested quantile then equals the mean.' }),
    max_context: z.int().min(1).nullable().meta({
      description:
        'The longest history it reads (an installed foundation model: its context length; a longer history is cut). Null: unbounded, or not installed.',
    }),
    horizon: z
      .object({ min: z.int().min(1), max: z.int().min(1).nullable().meta({ description: 'Null: unbounded.' }) })
      .meta({ description: 'The horizons it forecasts, where the installed export bounds them.' }),
    execution_provider: z.string().nullable().meta({
      description:
        'For a model run by ONNX Runtime: the execution provider (`cpu`, `cuda`...) its sessions run on once loaded, else the one this server would choose. Null for the others.',
    }),
  })
  .meta({ id: 'ModelInfo' });

const ModelList = z.object({ models: z.array(ModelInfo) }).meta({ id: 'ModelList' });
const ModelNameParams = z.strictObject({ name: z.string().meta({ description: 'A model name, as the `model` query parameter takes it.' }) });

/** The API's form of a model's description, with the provider its loaded sessions report when it has run. */
const toModelInfo = (engine: Engine, d: ModelDescription): z.output<typeof ModelInfo> => ({
  name: d.name,
  family: d.family,
  kind: d.kind,
  installed: d.installed,
  export: d.export,
  unavailable_reason: d.unavailableReason,
  covariates: [...d.covariates],
  quantiles: d.quantiles,
  max_context: d.maxContext,
  horizon: { min: d.horizon.least, max: d.horizon.most },
  execution_provider: d.executionProvider && (engine.threads.executionProviderOf(d.name) ?? d.executionProvider),
});

export async function modelRoutes(app: FastifyInstance, opts: { engine: Engine }): Promise<void> {
  const settings = opts.engine.settings.models;
  app.get('/models', async (request): Promise<z.output<typeof ModelList>> => {
    parseOr422(NoQuery, request.query, 'query');
    return { models: (await describeModels(settings)).map((d) => toModelInfo(opts.engine, d)) };
  });

  app.get('/models/:name', async (request): Promise<z.output<typeof ModelInfo>> => {
    parseOr422(NoQuery, request.query, 'query');
    const { name } = parseOr422(ModelNameParams, request.params, 'path');
    const description = await describeModel(name, settings);
    if (!description) throw new HttpError(404, 'not_found', `no model '${name}'; the models this server knows: ${MODEL_NAMES.join(', ')}`);
    return toModelInfo(opts.engine, description);
  });
}

export function modelPaths(): ZodOpenApiPathsObject {
  return {
    '/models': {
      get: {
        operationId: 'listModels',
        summary: 'Every model this server knows (beyond the reference): installed or not, with the covariates, quantiles, context and horizon it allows.',
        responses: { '200': jsonResponse('The models, in the order of the model list.', ModelList), ...ERRORS },
      },
    },
    '/models/{name}': {
      get: {
        operationId: 'getModel',
        summary: 'One model of the catalogue.',
        requestParams: { path: ModelNameParams },
        responses: { '200': jsonResponse('The model.', ModelInfo), '404': problemResponse('No model of that name (`not_found`).'), ...ERRORS },
      },
    },
  };
}
