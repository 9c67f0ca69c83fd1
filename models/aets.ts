import { predictive } from './ets/intervals.ts';
import { NoModelError, selectEts } from './ets/select.ts';
import { normalQuantile } from './normal.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from './types.ts';

/**
 * `aets`: automatic exponential smoothing, R forecast's `ets(y)` + `forecast()` with defaults.
 * The model (error x trend x season, damped or not) is chosen by AICc among likelihood fits; the
 * mean is R's forecast mean and the quantiles are Gaussian around it with the model's analytic
 * forecast variance (R's default prediction intervals), so the 10%/90% quantiles are R's 80% bounds.
 */
export function autoEtsForecast(task: ForecastTask): ForecastOutput {
  const y = task.history;
  if (y.length === 0) throw new ModelInputError('aets needs at least one observation of history; got 0');
  if (!(Number.isInteger(task.horizon) && task.horizon >= 1)) {
    throw new ModelInputError(`aets needs a whole horizon of at least 1; got ${task.horizon}`);
  }
  // R keeps ts frequencies as given; a fractional period cannot index seasonal states, so round.
  const m = Math.max(1, Math.round(task.seasonLength));
  let fit;
  try {
    fit = selectEts(y, m).best;
  } catch (err) {
    if (err instanceof NoModelError) throw new ModelInputError(`aets could not fit any ETS model: ${err.message}`);
    throw err;
  }
  const { mean, variance } = predictive(fit, task.horizon);
  return { mean, quantiles: finiteQuantiles(mean, variance, task.quantiles) };
}

/**
 * Gaussian quantiles mean + z sd, kept finite: multiplicative models' variances grow
 * geometrically and can overflow over very long horizons, where we hold the last finite spread;
 * a vanishing variance rounded a hair below zero counts as zero. A non-finite mean is left as it
 * is: the engine reports it as a failed forecast rather than serve a patched number.
 */
function finiteQuantiles(mean: Float64Array, variance: Float64Array, levels: readonly number[]): Float64Array[] {
  const h = mean.length;
  const sd = new Float64Array(h);
  let lastFinite = 0;
  for (let i = 0; i < h; i++) {
    const s = variance[i] > 0 ? Math.sqrt(variance[i]) : 0;
    if (Number.isFinite(s)) lastFinite = s;
    sd[i] = Number.isFinite(s) ? s : lastFinite;
  }
  return levels.map((level) => {
    const z = normalQuantile(level);
    return mean.map((mu, i) => {
      const q = mu + z * sd[i];
      return Number.isFinite(q) ? q : q > 0 ? Number.MAX_VALUE : -Number.MAX_VALUE;
    });
  });
}

export const aets: LocalModel = {
  name: 'aets',
  forecast: autoEtsForecast,
};
