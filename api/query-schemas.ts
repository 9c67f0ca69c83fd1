import { z } from 'zod';
import { MODEL_NAMES } from '../models/registry.ts';

/** Query parameters of 4.1, 4.4 and 4.6. Unknown parameters are refused like unknown body fields. */
export const ModelName = z.enum(MODEL_NAMES).meta({
  id: 'ModelName',
  description:
    'Model to run. When omitted, the server default (DEFAULT_MODEL). Beyond the reference, `aarima` takes numeric future covariates ' +
    '(`future_variables` and generated covariates known in advance) as regressors: regression with ARIMA errors, as R auto.arima(xreg=).',
});

/** The query of every forecasting call: the model, and the cloud and region a caller may prefer. */
const modelQuery = <M extends z.ZodType>(model: M) =>
  z.strictObject({
    model,
    // The prose adds oci to the machine-readable gcp/aws; all three are accepted.
    cloud: z.enum(['gcp', 'aws', 'oci']).optional().meta({ description: 'Preferred cloud; accepted and recorded, this server runs on its own host.' }),
    region: z.enum(['us', 'eu']).optional().meta({ description: 'Preferred processing region; accepted and recorded.' }),
  });

/** The stable endpoints: `model` falls back to the server's default. */
export const ModelQuery = (defaultModel: string) => modelQuery(ModelName.default(defaultModel as (typeof MODEL_NAMES)[number]));

/** The beta (4.6): `model` is required on every call (no server default). */
export const BetaModelQuery = modelQuery(z.enum(MODEL_NAMES).meta({ description: 'Model to run; required on every beta call (reference 4.6).' }));
