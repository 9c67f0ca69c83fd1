import type { Regressors } from './arima-estimation.ts';
import { aarimaOptions } from './aarima-config.ts';
import { AutoArimaError, forecastModel } from './auto-arima-model.ts';
import { autoArima } from './search.ts';
import { isConstant } from './unit-root.ts';
import { gaussianQuantiles } from '../../numerics/normal.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * Future covariates (caller-supplied or generated) as regressors: regression with ARIMA errors,
 * as R's auto.arima(y, xreg = X) then forecast(fit, xreg = newX). A column constant over the
 * history carries nothing to estimate and would be collinear with the mean, so it is left out.
 */
function regressors(task: ForecastTask): { fit: Regressors; future: Float64Array[] } | null {
  const future = task.covariates?.future ?? {};
  const n = task.history.length;
  const names: string[] = [];
  const columns: Float64Array[] = [];
  const ahead: Float64Array[] = [];
  for (const name of Object.keys(future).sort()) {
    const values = future[name];
    const column = Float64Array.from(values.slice(0, n + task.horizon), (v) => (typeof v === 'number' ? v : NaN));
    const missing = column.findIndex((v) => !Number.isFinite(v));
    if (missing >= 0) {
      throw new ModelInputError(`aarima needs a number at every step of each regressor; '${name}' has none at step ${missing} of its window`);
    }
    const past = column.subarray(0, n);
    if (isConstant(past)) continue;
    names.push(name);
    columns.push(past);
    ahead.push(column.subarray(n));
  }
  return names.length > 0 ? { fit: { names, columns }, future: ahead } : null;
}

/**
 * `aarima`: automatic ARIMA as R's forecast::auto.arima(y) with its defaults (stepwise search,
 * AICc, KPSS / seasonal-strength differencing, drift or mean when allowed), forecast as
 * forecast.Arima does: Kalman-filter mean and variance, Gaussian quantiles. With
 * model_config approximation "off", as auto.arima(y, approximation = FALSE): every candidate's
 * AICc from its maximum-likelihood fit, as statsforecast's AutoARIMA also searches.
 */
export function autoArimaForecast(task: ForecastTask): ForecastOutput {
  const y = task.history;
  if (y.length === 0) throw new ModelInputError('aarima needs at least one observation of history; got 0');
  const xreg = regressors(task);
  let model;
  try {
    // undefined: R's rule (by length and period); statsforecast's AutoARIMA passes False.
    const { approximation: setting, maxRefits } = aarimaOptions(task);
    const approximation = setting === 'off' ? false : setting === 'on' ? true : undefined;
    model = autoArima(y, { m: task.seasonLength, xreg: xreg?.fit ?? null, approximation, maxRefits });
  } catch (err) {
    // R stops on these too ("Not enough data to proceed", "No suitable ARIMA model found",
    // "xreg is rank deficient").
    if (err instanceof AutoArimaError)
      throw new ModelInputError(`aarima: ${err.message}${xreg && /xreg/.test(err.message) ? ` (regressors: ${xreg.fit.names.join(', ')})` : ''}`);
    throw err;
  }
  const { mean, sd } = forecastModel(model, task.horizon, xreg?.future);
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
