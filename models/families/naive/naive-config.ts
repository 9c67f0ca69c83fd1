import { z } from 'zod';
import { intervalSettings, localModelConfig, modelConfig, SeasonLengths } from '../../contract/model-config.ts';

/** naive repeats the last value: its season defaults to 1, whatever the frequency. */
export const NAIVE_SEASON_LENGTH = 1;

export const naiveConfig = localModelConfig(NAIVE_SEASON_LENGTH);

/** seasonal-naive repeats the last season: by default the frequency's natural cycle. */
export const seasonalNaiveConfig = localModelConfig(null);

/** The cycles seasonal-window-average averages by default: a month of weeks on hourly data. */
export const DEFAULT_WINDOW_SIZE = 4;

/** seasonal-window-average's own options (model_config `window_size`). */
export interface SeasonalWindowAverageOptions {
  readonly windowSize: number;
}

export const seasonalWindowAverageConfig = modelConfig(
  z.strictObject({
    season_length: SeasonLengths.default(null).meta({
      description:
        "One seasonal period or a list of them; the model averages over the longest one the history holds. Default: the frequency's natural cycles (H: 24 and 168, the week; D: 7 and 365; W: 52; M: 12; Q: 4).",
    }),
    window_size: z.int().min(1).max(100).default(DEFAULT_WINDOW_SIZE).meta({
      description: 'How many of the last cycles each step averages (fewer where the history holds fewer).',
    }),
    ...intervalSettings,
  }),
  (config): SeasonalWindowAverageOptions => ({ windowSize: config.window_size }),
);
