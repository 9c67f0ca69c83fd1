import { candidates, estimable, fitWith, forecastMean, selectCes, usesSeason, type CesFit } from './ces-estimation.ts';
import { forecastSd } from './ces-intervals.ts';
import { discountGrowth, type CesParameters, type CesVariant } from './recursion.ts';
import { gaussianQuantiles } from '../../numerics/normal.ts';
import { constantForecast, isExactlyConstant } from '../../contract/constant-forecast.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * `ces`: automatic Complex Exponential Smoothing (Svetunkov and Kourentzes; R's smooth::auto.ces),
 * as statsforecast 2.1.1's AutoCES(season_length = m, model = 'Z') defines it. The variants N (no
 * season), S (simple, lagged), P (partial) and F (full seasonality) are each fitted by maximum
 * likelihood with the reference's initial states, backfitting and bounded Nelder-Mead, and the one
 * with the smallest AICc is kept; only N is tried when m = 1 or the history has fewer than two
 * full seasons (models/families/ces/ces-estimation.ts). The mean is that model's forecast.
 *
 * Quantiles: the reference has intervals of its own (AutoCES.predict with `level`), the empirical
 * quantiles of 5,000 forecasts from normally perturbed final states. Those forecasts are exactly
 * normal around the mean, so we return the normal quantiles they converge to, computed in closed
 * form (models/families/ces/ces-intervals.ts): deterministic, and within the reference's Monte Carlo error of it.
 *
 * A constant history forecasts that constant with zero-width quantiles, as the reference does (it
 * switches to Naive). Where we differ from it, on purpose, besides the closed-form quantiles: a
 * variant with too few observations to estimate its error variance (n <= k + 2 for k state
 * components) is not tried, where the reference would fit and perhaps choose it with a negative
 * variance; so the non-seasonal model needs at least 5 observations (the reference refuses 4 and
 * returns undefined intervals at 3).
 *
 * Between refits of a backtest (`reuse`), the variant and its smoothing parameters are kept; the
 * initial states, backfitted filter, residual variance and forecast follow the new history, as
 * the reference's `forward` does. Not where the kept fit only stood in for what the history could
 * not yet support (no season tried, and the new history carries one), nor where its parameters
 * are not stable: the reference's estimation does not require it, and a fit on a short history
 * can hide a filter that explodes on a longer one. Those select afresh.
 */

/** What a fit keeps between backtest dates: the chosen variant, its lag and parameters. */
export interface CesChoice {
  variant: CesVariant;
  m: number;
  parameters: CesParameters;
  /** Whether the fit's history could carry a season (the seasonal variants were tried). */
  seasonTried: boolean;
}

/**
 * The most a kept fit's states may grow per step with nothing observed (its discount matrix's
 * spectral radius): smooth::ces requires at most 1; the margin keeps the near-unit roots of level
 * models, which the growth measured over a finite run reads a hair above 1.
 */
const MAX_KEPT_GROWTH = 1.001;

const seasonOf = (task: ForecastTask) => Math.max(1, Math.round(task.seasonLength));

function checkTask(task: ForecastTask): void {
  const { horizon, history } = task;
  if (!(Number.isInteger(horizon) && horizon >= 1)) throw new ModelInputError(`ces needs a whole horizon of at least 1; got ${horizon}`);
  const n = history.length;
  // The smallest model has 3 parameters (two smoothing, one variance) and needs n > 4 for its AICc and variance.
  if (!candidates(n, seasonOf(task)).some((v) => estimable(n, v))) {
    throw new ModelInputError(`ces needs at least 5 observations of history; got ${n}`);
  }
}

function output(fit: CesFit, task: ForecastTask): ForecastOutput {
  const mean = forecastMean(fit, task.horizon);
  const quantiles = task.quantiles.length > 0 ? gaussianQuantiles(mean, forecastSd(fit, task.horizon), task.quantiles) : [];
  return { mean, quantiles };
}

function select(task: ForecastTask): CesFit {
  const fit = selectCes(task.history, seasonOf(task));
  if (fit === null) throw new ModelInputError('ces could not fit any CES model to this history (every fit was numerically unstable)');
  return fit;
}

/** Selects and fits the variant on the task's history; null for a constant history (no fit). */
export function fitCes(task: ForecastTask): CesChoice | null {
  checkTask(task);
  if (isExactlyConstant(task.history)) return null;
  const { variant, m, parameters } = select(task);
  return { variant, m, parameters, seasonTried: usesSeason(task.history.length, seasonOf(task)) };
}

/** Forecasts with a kept variant and parameters: the new history only passes through the recursion. */
export function forecastWithCes(choice: CesChoice | null, task: ForecastTask): ForecastOutput {
  checkTask(task);
  if (isExactlyConstant(task.history)) return constantForecast(task.history[0], task.horizon, task.quantiles.length);
  // A constant history kept no fit; once the series moves there is nothing to keep: fit it.
  if (choice === null) return cesForecast(task);
  const seasonNow = usesSeason(task.history.length, seasonOf(task));
  if ((seasonNow && !choice.seasonTried) || discountGrowth(choice.variant, choice.m, choice.parameters) > MAX_KEPT_GROWTH) return cesForecast(task);
  // As the reference's forward: a seasonal variant falls back to N if the history cannot carry its season.
  const variant = usesSeason(task.history.length, choice.m) ? choice.variant : 'N';
  const fit = fitWith(task.history, choice.m, variant, choice.parameters);
  // A history the kept parameters cannot filter is selected afresh, as aets and aarima do.
  if (Number.isNaN(fit.lik)) return cesForecast(task);
  return output(fit, task);
}

export function cesForecast(task: ForecastTask): ForecastOutput {
  checkTask(task);
  if (isExactlyConstant(task.history)) return constantForecast(task.history[0], task.horizon, task.quantiles.length);
  return output(select(task), task);
}

export const ces: LocalModel = {
  name: 'ces',
  forecast: cesForecast,
  reuse: { fit: fitCes, forecast: forecastWithCes as (fitted: unknown, task: ForecastTask) => ForecastOutput },
};
