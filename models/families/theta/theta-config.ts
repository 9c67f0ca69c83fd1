import { localModelConfig } from '../../contract/model-config.ts';

/** theta: its season and where its quantiles come from; no settings of its own. */
export const thetaConfig = localModelConfig(null);
