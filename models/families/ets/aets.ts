import { aetsOptions } from './aets-config.ts';
import { predictive } from './ets-intervals.ts';
import { NoModelError, selectEts } from './select.ts';
import { advanceState } from './ets-state-space.ts';
import type { EtsFit } from './ets-types.ts';
import { normalQuantile } from '../../numerics/normal.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * `aets`: automatic exponential smoothing. The model (error x trend x season, damped or not) is
 * chosen by AICc among likelihood fits, each estimated as statsforecast's AutoETS does (default)
 * or exactly as R forecast's `ets(y)` (model_config estimation "r"). Either way the mean and the
 * Gaussian quantiles come from R's analytic formulas for the selected model (its default
 * prediction intervals), so the 10%/90% quantiles are R's 80% bounds for that model.
 */

function checkTask(task: ForecastTask): void {
  if (task.history.length === 0) throw new ModelInputError('aets needs at least one observation of history; got 0');
  if (!(Number.isInteger(task.horizon) && task.horizon >= 1)) {
    throw new ModelInputError(`aets needs a whole horizon of at least 1; got ${task.horizon}`);
  }
}

/** The model R's `ets(y)` selects for the task's history, with its parameters and final states. */
export function fitAets(task: ForecastTask): EtsFit {
  checkTask(task);
  // R keeps ts frequencies as given; a fractional period cannot index seasonal states, so round.
  const m = Math.max(1, Math.round(task.seasonLength));
  try {
    return selectEts(task.history, m, aetsOptions(task).estimation).best;
  } catch (err) {
    if (err instanceof NoModelError) throw new ModelInputError(`aets could not fit any ETS model: ${err.message}`);
    throw err;
  }
}

function forecastFit(fit: EtsFit, task: ForecastTask): ForecastOutput {
  const { mean, variance } = predictive(fit, task.horizon);
  return { mean, quantiles: finiteQuantiles(mean, variance, task.quantiles) };
}

export function autoEtsForecast(task: ForecastTask): ForecastOutput {
  return forecastFit(fitAets(task), task);
}

/**
 * Between refits of a backtest: the kept model (structure, smoothing parameters, innovation
 * variance) takes in the observations since its fit, as R's `ets(y, model = fit,
 * use.initial.values = TRUE)` keeps the parameters; only the states move. R also recomputes the
 * variance from the whole history's residuals; the fit does not keep its residuals, so the
 * variance stays the fit's. Without those observations in the history (a context window
 * shorter than the gap) the model is fitted anew. So is a fallback fit (no likelihood: a history
 * too short to estimate one, or constant): it stood in for a model the history could not yet
 * support, and its Holt-Winters smoothing parameters do not run in the ETS recursion.
 */
export function forecastWithAets(fit: EtsFit, task: ForecastTask): ForecastOutput {
  checkTask(task);
  const since = task.refit?.since ?? 0;
  if (since === 0) return forecastFit(fit, task);
  if (since > task.history.length || !Number.isFinite(fit.lik)) return autoEtsForecast(task);
  const recursion = { ...fit.spec, m: fit.m, ...fit.params };
  const lastState = advanceState(fit.lastState, task.history.subarray(task.history.length - since), recursion);
  return forecastFit({ ...fit, lastState }, task);
}

/**
 * Gaussian quantiles mean + z sd, kept finite: multiplicative models' variances grow
 * geometrically and can overflow over very long horizons, where we hold the last finite spread;
 * a vanishing variance rounded a hair below zero counts as zero. A non-finite mean is left as it
 * is, and so is a spread that is not finite from the first step (values so large that their
 * squares overflow): there is no spread to hold, and a width of zero would claim certainty. The
 * engine reports either as a failed forecast, or refuses the values, rather than serve a patched
 * number.
 */
function finiteQuantiles(mean: Float64Array, variance: Float64Array, levels: readonly number[]): Float64Array[] {
  const h = mean.length;
  const sd = new Float64Array(h);
  let lastFinite = Number.NaN;
  for (let i = 0; i < h; i++) {
    // Not above zero and not NaN: rounding below zero. NaN: an overflow met another (Inf - Inf).
    const s = variance[i] > 0 ? Math.sqrt(variance[i]) : Number.isNaN(variance[i]) ? Number.NaN : 0;
    if (Number.isFinite(s)) lastFinite = s;
    sd[i] = Number.isFinite(s) ? s : lastFinite;
  }
  return levels.map((level) => {
    const z = normalQuantile(level);
    return mean.map((mu, i) => {
      if (Number.isNaN(sd[i])) return Number.NaN;
      const q = mu + z * sd[i];
      return Number.isFinite(q) ? q : q > 0 ? Number.MAX_VALUE : -Number.MAX_VALUE;
    });
  });
}

export const aets: LocalModel = {
  name: 'aets',
  forecast: autoEtsForecast,
  reuse: { fit: fitAets, forecast: forecastWithAets as (fitted: unknown, task: ForecastTask) => ForecastOutput },
};
