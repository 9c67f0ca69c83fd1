import { z } from 'zod';
import { intervalSettings, modelConfig, SeasonLength } from '../../contract/model-config.ts';
import type { ForecastTask } from '../../contract/model-interface.ts';

/** aets's own options: whose estimation it follows (model_config `estimation`). */
export interface AetsOptions {
  readonly estimation: 'statsforecast' | 'r';
}

/** aets: its season, its quantiles, and whose estimation it follows. */
export const aetsConfig = modelConfig(
  z.strictObject({
    season_length: SeasonLength.default(null),
    estimation: z.enum(['statsforecast', 'r']).default('statsforecast').meta({
      description:
        "How each candidate model is estimated. `statsforecast` (default): as statsforecast's AutoETS (a bounded Nelder-Mead that stops early, seasonal models at any period, 52 weeks included), which forecasts better on M3 and M4 (docs/models.md). `r`: exactly R forecast's `ets()` (seasonality above period 24 ignored).",
    }),
    ...intervalSettings,
  }),
  (config): AetsOptions => ({ estimation: config.estimation }),
);

/** A task's aets options; without a model_config, statsforecast's estimation. */
export const aetsOptions = (task: ForecastTask): AetsOptions => (task.options as AetsOptions | undefined) ?? { estimation: 'statsforecast' };
