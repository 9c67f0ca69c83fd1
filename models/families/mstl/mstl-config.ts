import { z } from 'zod';
import { intervalSettings, modelConfig, SeasonLengths } from '../../contract/model-config.ts';
import type { ForecastTask } from '../../contract/model-interface.ts';

/** mstl's own options: the model of the deseasonalised series (model_config `trend_model`). */
export interface MstlOptions {
  readonly trendModel: 'aets' | 'aarima';
}

/** mstl: several seasonal periods, and the model of the deseasonalised series. */
export const mstlConfig = modelConfig(
  z.strictObject({
    season_length: SeasonLengths.default(null).meta({
      description:
        "One seasonal period or a list of them (hourly data: [24, 168]). Default: the frequency's natural cycles (10S: 360, 8640; min: 60, 1440; 5min: 288, 2016; 10min: 144, 1008; 15min: 96, 672; 30min: 48, 336; H: 24, 168; D: 7, 365; W: 52; M: 12; Q: 4). A period that does not fit twice in a history is left out for it.",
    }),
    trend_model: z.enum(['aets', 'aarima']).default('aets').meta({
      description: 'The non-seasonal model forecasting the deseasonalised series (trend + remainder).',
    }),
    ...intervalSettings,
  }),
  (config): MstlOptions => ({ trendModel: config.trend_model }),
);

/** A task's mstl options; without a model_config, aets forecasts the deseasonalised series. */
export const mstlOptions = (task: ForecastTask): MstlOptions => (task.options as MstlOptions | undefined) ?? { trendModel: 'aets' };
