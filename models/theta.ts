import { forecastMean, selectTheta } from './theta/fit.ts';
import { pathQuantiles, residualSigma, simulatePaths } from './theta/intervals.ts';
import { deseasonalise, reseasonalise, seasonalAdjustment } from './theta/seasonal.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from './types.ts';

/**
 * `theta`: automatic Theta, as statsforecast's AutoTheta defines it. A 90% seasonality test at
 * the seasonal lag decides on a classical (multiplicative, else additive) deseasonalisation;
 * then the standard, optimised, dynamic standard and dynamic optimised Theta models are fitted
 * and the one with the smallest in-sample one-step error kept (models/theta/fit.ts). The mean
 * is that model's forecast; the quantiles come from simulated paths of it (theta/intervals.ts),
 * both reseasonalised.
 *
 * Where we differ from the reference, on purpose: the interval's sigma is taken from the
 * deseasonalised residuals (the reference adds the seasonal indices to them first, which for an
 * additive season widens the interval by the season's amplitude), a constant series forecasts
 * that constant with no spread, and 1,000 paths from a fixed seed replace its 200.
 */
export function thetaForecast(task: ForecastTask): ForecastOutput {
  const y = task.history;
  const { horizon } = task;
  if (!(Number.isInteger(horizon) && horizon >= 1)) throw new ModelInputError(`theta needs a whole horizon of at least 1; got ${horizon}`);
  // The models have three parameters and skip three errors: fewer points fit nothing.
  if (y.length <= 3) throw new ModelInputError(`theta needs at least 4 observations of history; got ${y.length}`);
  if (y.every((v) => v === y[0])) {
    const flat = new Float64Array(horizon).fill(y[0]);
    return { mean: flat, quantiles: task.quantiles.map(() => flat.slice()) };
  }
  const m = Math.max(1, Math.round(task.seasonLength));
  const adjustment = seasonalAdjustment(y, m);
  const fit = selectTheta(adjustment ? deseasonalise(y, adjustment) : y);
  if (fit === null) throw new ModelInputError('theta could not fit any Theta model to this history (every fit was numerically unstable)');

  const mean = forecastMean(fit, horizon);
  let quantiles: Float64Array[] = [];
  if (task.quantiles.length > 0) {
    const paths = simulatePaths(fit, horizon, residualSigma(fit.residuals));
    quantiles = pathQuantiles(paths, horizon, task.quantiles);
  }
  if (adjustment) {
    reseasonalise(mean, adjustment);
    for (const q of quantiles) reseasonalise(q, adjustment);
  }
  return { mean, quantiles };
}

export const theta: LocalModel = {
  name: 'theta',
  forecast: thetaForecast,
};
