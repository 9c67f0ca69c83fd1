import { autoArima, forecastModel, AutoArimaError } from './arima/search.ts';
import { gaussianQuantiles } from './normal.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from './types.ts';

/**
 * `aarima`: automatic ARIMA as R's forecast::auto.arima(y) with its defaults (stepwise search,
 * AICc, KPSS / seasonal-strength differencing, drift or mean when allowed), forecast as
 * forecast.Arima does: Kalman-filter mean and variance, Gaussian quantiles.
 */
export function autoArimaForecast(task: ForecastTask): ForecastOutput {
  const y = task.history;
  if (y.length === 0) throw new ModelInputError('aarima needs at least one observation of history; got 0');
  let model;
  try {
    model = autoArima(y, { m: task.seasonLength });
  } catch (err) {
    // R stops on these too ("Not enough data to proceed", "No suitable ARIMA model found").
    if (err instanceof AutoArimaError) throw new ModelInputError(`aarima: ${err.message}`);
    throw err;
  }
  const { mean, sd } = forecastModel(model, task.horizon);
  for (let i = 0; i < mean.length; i++) {
    if (!Number.isFinite(mean[i]) || !Number.isFinite(sd[i])) {
      throw new ModelInputError('aarima: the selected ARIMA model gives non-finite forecasts for this series');
    }
  }
  return { mean, quantiles: gaussianQuantiles(mean, sd, task.quantiles) };
}

export const aarima: LocalModel = {
  name: 'aarima',
  forecast: autoArimaForecast,
};
