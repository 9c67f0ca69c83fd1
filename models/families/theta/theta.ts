import { fitWith, forecastMean, selectTheta, type ThetaFit, type ThetaParameters, type ThetaVariant } from './theta-estimation.ts';
import { pathQuantiles, residualSigma, simulatePaths } from './theta-intervals.ts';
import { deseasonalise, reseasonalise, seasonalAdjustment, type SeasonalAdjustment } from './seasonal.ts';
import { constantForecast, isExactlyConstant } from '../../contract/constant-forecast.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * `theta`: automatic Theta, as statsforecast's AutoTheta defines it. A 90% seasonality test at
 * the seasonal lag decides on a classical (multiplicative, else additive) deseasonalisation;
 * then the standard, optimised, dynamic standard and dynamic optimised Theta models are fitted
 * and the one with the smallest in-sample one-step error kept (models/families/theta/theta-estimation.ts). The mean
 * is that model's forecast; the quantiles come from simulated paths of it (theta-intervals.ts),
 * both reseasonalised.
 *
 * Where we differ from the reference, on purpose: the interval's sigma is taken from the
 * deseasonalised residuals (the reference adds the seasonal indices to them first, which for an
 * additive season widens the interval by the season's amplitude), a constant series forecasts
 * that constant with no spread, and 1,000 paths from a fixed seed replace its 200.
 *
 * Between refits of a backtest (`reuse`), the variant and its parameters are kept; the seasonal
 * test and decomposition, the filter's states and the residuals' spread follow the new history.
 */

/** What a fit keeps between backtest dates: the chosen variant and its parameters. */
export interface ThetaChoice {
  variant: ThetaVariant;
  parameters: ThetaParameters;
}

function checkTask(task: ForecastTask): void {
  const { horizon, history } = task;
  if (!(Number.isInteger(horizon) && horizon >= 1)) throw new ModelInputError(`theta needs a whole horizon of at least 1; got ${horizon}`);
  // The models have three parameters and skip three errors: fewer points fit nothing.
  if (history.length <= 3) throw new ModelInputError(`theta needs at least 4 observations of history; got ${history.length}`);
}

/** The seasonal test and decomposition run on every history, fitted or not. */
function adjusted(task: ForecastTask): { y: Float64Array; adjustment: SeasonalAdjustment | null } {
  const adjustment = seasonalAdjustment(task.history, Math.max(1, Math.round(task.seasonLength)));
  return { y: adjustment ? deseasonalise(task.history, adjustment) : task.history, adjustment };
}

function output(fit: ThetaFit, adjustment: SeasonalAdjustment | null, task: ForecastTask): ForecastOutput {
  const mean = forecastMean(fit, task.horizon);
  let quantiles: Float64Array[] = [];
  if (task.quantiles.length > 0) {
    const paths = simulatePaths(fit, task.horizon, residualSigma(fit.residuals));
    quantiles = pathQuantiles(paths, task.horizon, task.quantiles);
  }
  if (adjustment) {
    reseasonalise(mean, adjustment);
    for (const q of quantiles) reseasonalise(q, adjustment);
  }
  return { mean, quantiles };
}

/** Selects and fits the variant on the task's history; null for a constant history (no fit). */
export function fitTheta(task: ForecastTask): ThetaChoice | null {
  checkTask(task);
  if (isExactlyConstant(task.history)) return null;
  const fit = selectTheta(adjusted(task).y);
  if (fit === null) throw new ModelInputError('theta could not fit any Theta model to this history (every fit was numerically unstable)');
  return { variant: fit.variant, parameters: fit.parameters };
}

/** Forecasts with a kept variant and parameters: the new observations only pass through the filter. */
export function forecastWithTheta(choice: ThetaChoice | null, task: ForecastTask): ForecastOutput {
  checkTask(task);
  if (isExactlyConstant(task.history)) return constantForecast(task.history[0], task.horizon, task.quantiles.length);
  // A constant history kept no fit; once the series moves there is nothing to keep: fit it.
  if (choice === null) return thetaForecast(task);
  const { y, adjustment } = adjusted(task);
  return output(fitWith(y, choice.variant, choice.parameters), adjustment, task);
}

export function thetaForecast(task: ForecastTask): ForecastOutput {
  checkTask(task);
  if (isExactlyConstant(task.history)) return constantForecast(task.history[0], task.horizon, task.quantiles.length);
  const { y, adjustment } = adjusted(task);
  const fit = selectTheta(y);
  if (fit === null) throw new ModelInputError('theta could not fit any Theta model to this history (every fit was numerically unstable)');
  return output(fit, adjustment, task);
}

export const theta: LocalModel = {
  name: 'theta',
  forecast: thetaForecast,
  reuse: { fit: fitTheta, forecast: forecastWithTheta as (fitted: unknown, task: ForecastTask) => ForecastOutput },
};
