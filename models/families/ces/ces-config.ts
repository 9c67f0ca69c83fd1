import { localModelConfig } from '../../contract/model-config.ts';

/** ces: its season and where its quantiles come from; no settings of its own. */
export const cesConfig = localModelConfig(null);
