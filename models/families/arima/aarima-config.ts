import { z } from 'zod';
import { intervalSettings, modelConfig, SeasonLength } from '../../contract/model-config.ts';
import type { ForecastTask } from '../../contract/model-interface.ts';

/**
 * aarima's own options: `auto` searches as R's auto.arima decides (candidates compared by their
 * CSS fit on long or high-frequency series), `off` compares every candidate by its
 * maximum-likelihood fit (R's approximation = FALSE; statsforecast's AutoARIMA does so).
 */
export interface AarimaOptions {
  /** `on`: compare candidates by their CSS fit whatever the length (the ensemble's short profile; not a request option). */
  readonly approximation: 'auto' | 'off' | 'on';
  /** With the approximation, candidates refitted by maximum likelihood at most before the best approximate fit is kept (the ensemble's short profile; not a request option). */
  readonly maxRefits?: number;
}

/** aarima: its season, its quantiles, and whether the search may compare candidates approximately. */
export const aarimaConfig = modelConfig(
  z.strictObject({
    season_length: SeasonLength.default(null),
    approximation: z.enum(['auto', 'off']).default('auto').meta({
      description:
        "R auto.arima()'s `approximation`. `auto` (default, R's): on long or high-frequency series (over 150 observations, or a period over 12) the stepwise search compares candidates by their conditional-sum-of-squares fit and fits only the chosen one by maximum likelihood. `off` (R's `approximation = FALSE`, as statsforecast's AutoARIMA runs): every candidate is compared by its maximum-likelihood AICc: about five times the CPU time on such series (docs/models.md).",
    }),
    ...intervalSettings,
  }),
  (config): AarimaOptions => ({ approximation: config.approximation }),
);

/** A task's aarima options; without a model_config, R's approximation rule. */
export const aarimaOptions = (task: ForecastTask): AarimaOptions => (task.options as AarimaOptions | undefined) ?? { approximation: 'auto' };
