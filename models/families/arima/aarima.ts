import { ArimaFitError, type Regressors } from './arima-estimation.ts';
import { aarimaOptions } from './aarima-config.ts';
import { AutoArimaError, forecastModel, type AutoArimaModel } from './auto-arima-model.ts';
import { keptModel } from './candidates.ts';
import { autoArima } from './search.ts';
import { isConstant } from './unit-root.ts';
import { SingularError } from '../../numerics/linalg.ts';
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

/** The search's selection for the task's history, with the regressors it was made with. */
function select(task: ForecastTask, xreg: ReturnType<typeof regressors>): AutoArimaModel {
  try {
    // undefined: R's rule (by length and period); statsforecast's AutoARIMA passes False.
    const { approximation: setting, maxRefits } = aarimaOptions(task);
    const approximation = setting === 'off' ? false : setting === 'on' ? true : undefined;
    return autoArima(task.history, { m: task.seasonLength, xreg: xreg?.fit ?? null, approximation, maxRefits });
  } catch (err) {
    // R stops on these too ("Not enough data to proceed", "No suitable ARIMA model found",
    // "xreg is rank deficient").
    if (err instanceof AutoArimaError)
      throw new ModelInputError(`aarima: ${err.message}${xreg && /xreg/.test(err.message) ? ` (regressors: ${xreg.fit.names.join(', ')})` : ''}`);
    // Regressors that explain the series exactly leave no error variance, and R's arima stops on
    // the singular Hessian as here: the caller's data, not a failure of the service.
    if (err instanceof SingularError && xreg)
      throw new ModelInputError(
        `aarima could not fit its regressors (${xreg.fit.names.join(', ')}): they explain the series exactly, or nearly (${err.message})`,
      );
    throw err;
  }
}

function output(model: AutoArimaModel, task: ForecastTask, xreg: ReturnType<typeof regressors>): ForecastOutput {
  const { mean, sd } = forecastModel(model, task.horizon, xreg?.future);
  for (let i = 0; i < mean.length; i++) {
    if (!Number.isFinite(mean[i]) || !Number.isFinite(sd[i])) {
      throw new ModelInputError('aarima: the selected ARIMA model gives non-finite forecasts for this series');
    }
  }
  return { mean, quantiles: gaussianQuantiles(mean, sd, task.quantiles) };
}

function checkHistory(task: ForecastTask): void {
  if (task.history.length === 0) throw new ModelInputError('aarima needs at least one observation of history; got 0');
}

/**
 * `aarima`: automatic ARIMA as R's forecast::auto.arima(y) with its defaults (stepwise search,
 * AICc, KPSS / seasonal-strength differencing, drift or mean when allowed), forecast as
 * forecast.Arima does: Kalman-filter mean and variance, Gaussian quantiles. With
 * model_config approximation "off", as auto.arima(y, approximation = FALSE): every candidate's
 * AICc from its maximum-likelihood fit, as statsforecast's AutoARIMA also searches.
 */
export function autoArimaForecast(task: ForecastTask): ForecastOutput {
  checkHistory(task);
  const xreg = regressors(task);
  return output(select(task, xreg), task, xreg);
}

/** What a fit keeps between backtest dates: the selected model and the regressors it was selected with. */
export interface AarimaFit {
  readonly model: AutoArimaModel;
  readonly regressors: readonly string[];
}

export function fitAarima(task: ForecastTask): AarimaFit {
  checkHistory(task);
  const xreg = regressors(task);
  return { model: select(task, xreg), regressors: xreg?.fit.names ?? [] };
}

/**
 * Forecasts with a kept selection, as forecast::Arima(y, model = fit): its orders, coefficients and
 * residual variance stay, and the new observations pass through the filter (keptModel). A
 * constant history kept no model to carry; nor does one whose regressors changed (a column
 * constant at the fit may vary since): those are selected afresh, as is a history the kept model
 * cannot filter.
 */
export function forecastWithAarima(kept: AarimaFit, task: ForecastTask): ForecastOutput {
  checkHistory(task);
  const xreg = regressors(task);
  const names = xreg?.fit.names ?? [];
  const same = names.length === kept.regressors.length && names.every((name, i) => name === kept.regressors[i]);
  if (kept.model.kind === 'constant' || !same) return autoArimaForecast(task);
  let model: AutoArimaModel;
  try {
    model = keptModel(kept.model, task.history, xreg?.fit ?? null);
  } catch (err) {
    if (err instanceof AutoArimaError || err instanceof ArimaFitError) return autoArimaForecast(task);
    throw err;
  }
  return output(model, task, xreg);
}

export const aarima: LocalModel = {
  name: 'aarima',
  forecast: autoArimaForecast,
  reuse: { fit: fitAarima, forecast: forecastWithAarima as (fitted: unknown, task: ForecastTask) => ForecastOutput },
};
