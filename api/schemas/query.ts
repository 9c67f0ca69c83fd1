import { z } from 'zod';
import { MODEL_NAMES } from '../../models/contract/model-registry.ts';

type KnownModel = (typeof MODEL_NAMES)[number];

/** The query string of an operation that takes no parameters: any is refused, never ignored (decision 019). */
export const NoQuery = z.strictObject({});

const ABOUT_AARIMA =
  'Beyond the reference, `aarima` takes numeric future covariates ' +
  '(`future_variables` and generated covariates known in advance) as regressors: regression with ARIMA errors, as R auto.arima(xreg=).';

/** What the document says of the names it leaves out: they are known, and answered with the reason they cannot run. */
const unlisted = (runnable: readonly string[]) => {
  const others = MODEL_NAMES.filter((name) => !runnable.includes(name));
  return others.length === 0
    ? ''
    : ` The API reference's other names (${others.join(', ')}) are known and answer 422 \`model_unavailable\` with the reason (a foundation model until its exported weights are installed, see docs/foundation-models.md).`;
};

/**
 * The `model` parameter. Validation takes every known name, so that a model this server cannot
 * run is answered with why (422 `model_unavailable`, engine/model-checks.ts) rather than as a
 * typo; the document lists only `runnable`, the models this server runs now, so that a client
 * generated from it is never offered a value the server refuses.
 */
const modelName = (runnable: readonly string[]) =>
  z.enum(runnable as [KnownModel, ...KnownModel[]]).meta({
    id: 'ModelName',
    description: `Model to run. When omitted, the server default (DEFAULT_MODEL). ${ABOUT_AARIMA}${unlisted(runnable)}`,
  });

/** The query of every forecasting call: the model, and the cloud and region a caller may prefer. */
const modelQuery = <M extends z.ZodType>(model: M) =>
  z.strictObject({
    model,
    // The prose adds oci to the machine-readable gcp/aws; all three are accepted.
    cloud: z.enum(['gcp', 'aws', 'oci']).optional().meta({ description: 'Preferred cloud; accepted and recorded, this server runs on its own host.' }),
    region: z.enum(['us', 'eu']).optional().meta({ description: 'Preferred processing region; accepted and recorded.' }),
  });

/**
 * Query parameters of 4.1, 4.4 and 4.6. Unknown parameters are refused like unknown body fields.
 * The stable endpoints: `model` falls back to the server's default. `runnable`: the names the
 * OpenAPI document lists (see modelName); validation keeps all of them.
 */
export const ModelQuery = (defaultModel: string, runnable: readonly string[] = MODEL_NAMES) =>
  modelQuery(modelName(runnable).default(defaultModel as KnownModel));

/** The beta (4.6): `model` is required on every call (no server default). `runnable` as for ModelQuery. */
export const betaModelQuery = (runnable: readonly string[] = MODEL_NAMES) =>
  modelQuery(
    z.enum(runnable as [KnownModel, ...KnownModel[]]).meta({
      description: `Model to run; required on every beta call (reference 4.6). ${ABOUT_AARIMA}${unlisted(runnable)}`,
    }),
  );

/** The beta's query as validated: every known name. */
export const BetaModelQuery = betaModelQuery();
