import { z } from 'zod';
import { MODEL_NAMES } from '../models/registry.ts';

/** Query parameters of 4.1 and 4.4. Unknown parameters are refused like unknown body fields. */
export const ModelName = z.enum(MODEL_NAMES).meta({
  id: 'ModelName',
  description:
    'Model to run. When omitted, the server default (DEFAULT_MODEL). Beyond the reference, `aarima` takes numeric future covariates ' +
    '(`future_variables` and generated covariates known in advance) as regressors: regression with ARIMA errors, as R auto.arima(xreg=).',
});

export const ModelQuery = (defaultModel: string) =>
  z.strictObject({
    model: ModelName.default(defaultModel as (typeof MODEL_NAMES)[number]),
    // The prose adds oci to the machine-readable gcp/aws; all three are accepted.
    cloud: z.enum(['gcp', 'aws', 'oci']).optional().meta({ description: 'Preferred cloud; accepted and recorded, this server runs on its own host.' }),
    region: z.enum(['us', 'eu']).optional().meta({ description: 'Preferred processing region; accepted and recorded.' }),
  });
