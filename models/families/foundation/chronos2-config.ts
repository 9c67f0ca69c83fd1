import { z } from 'zod';
import { modelConfig } from '../../contract/model-config.ts';

/** chronos-2: whether the series of a request inform each other (read by the engine as `is_global`). */
export const chronos2Config = modelConfig(
  z.strictObject({
    is_global: z.boolean().default(false).meta({
      description:
        'Cross-learning: the series that share a forecast creation time are forecast jointly, so related series inform each other (only_as_context series included, cut at that time).',
    }),
  }),
);
