import { localModelConfig } from '../../contract/model-config.ts';

/** naive repeats the last value: its season defaults to 1, whatever the frequency. */
export const NAIVE_SEASON_LENGTH = 1;

export const naiveConfig = localModelConfig(NAIVE_SEASON_LENGTH);

/** seasonal-naive repeats the last season: by default the frequency's natural cycle. */
export const seasonalNaiveConfig = localModelConfig(null);
