import { aarima } from '../arima/aarima.ts';
import { aets } from '../ets/aets.ts';
import { mstlOptions } from './mstl-config.ts';
import { mstlDecompose, seasonalForecast, usablePeriods, type Mstl } from './mstl-decomposition.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * `mstl`: multiple seasonalities, as statsforecast's MSTL forecasts them. The history is split by
 * MSTL (models/families/mstl/mstl-decomposition.ts) into one seasonal component per period (hourly data: the day,
 * 24, and the week, 168) and the rest; the rest (trend + remainder) is forecast by a non-seasonal
 * model, `aets` by default (statsforecast: AutoETS 'ZZN') or `aarima`, and each seasonal
 * component by its last cycle repeated. The quantiles are the trend model's, shifted by the
 * seasonal forecast: the seasonal components are taken as known, as the reference does.
 *
 * Between refits of a backtest (`reuse`), and in an ensemble's later windows, the fit is kept:
 * each seasonal component's last cycle and the trend model's fit. Observations since the fit lose
 * those cycles continued, the trend model's states run through what remains, and the forecast adds
 * the cycles continued again. The decomposition and the trend model's selection are most of a fit's
 * cost (docs/decisions/082-ensemble-windows-carry-one-fit.md). Both trend models keep fits;
 * `aarima` keeps its selection (docs/decisions/086-aarima-keeps-its-selection.md).
 */

const TREND_MODELS = { aets, aarima } as const;
export type MstlTrendModel = keyof typeof TREND_MODELS;

/** What a kept fit holds: the deseasonalised history, each component's last cycle, the trend model's fit. */
export interface MstlFit {
  readonly adjusted: Float64Array;
  readonly cycles: readonly Float64Array[];
  readonly trend: unknown;
}

function checkTask({ history, horizon }: ForecastTask): void {
  if (history.length < 2) throw new ModelInputError(`mstl needs at least 2 observations of history; got ${history.length}`);
  if (!(Number.isInteger(horizon) && horizon >= 1)) throw new ModelInputError(`mstl needs a whole horizon of at least 1; got ${horizon}`);
}

/** The non-seasonal task the trend model forecasts (or fits): the task's deseasonalised history. */
function trendTask(task: ForecastTask, adjusted: Float64Array): ForecastTask {
  return {
    history: adjusted,
    horizon: task.horizon,
    quantiles: task.quantiles,
    seasonLength: 1,
    ...(task.covariates && { covariates: task.covariates }),
  };
}

/** The task's decomposition and the trend model's task. */
function split(task: ForecastTask): { decomposition: Mstl; rest: ForecastTask } {
  checkTask(task);
  const decomposition = mstlDecompose(task.history, task.seasonLengths ?? [task.seasonLength]);
  return { decomposition, rest: trendTask(task, decomposition.adjusted) };
}

/** The trend model's forecast shifted by the seasonal forecast, read from `seasonal[offset]` on. */
function addSeasons(rest: ForecastOutput, seasonal: Float64Array, offset = 0): ForecastOutput {
  const shift = (values: Float64Array) => values.map((v, j) => v + seasonal[offset + j]);
  return { mean: shift(rest.mean), quantiles: rest.quantiles.map(shift) };
}

const trendModel = (task: ForecastTask) => TREND_MODELS[mstlOptions(task).trendModel];

export function mstlForecast(task: ForecastTask): ForecastOutput {
  const { decomposition, rest } = split(task);
  return addSeasons(trendModel(task).forecast(rest), seasonalForecast(decomposition, task.horizon));
}

export function fitMstl(task: ForecastTask): MstlFit | null {
  const reuse = trendModel(task).reuse;
  if (!reuse) return null;
  const { decomposition, rest } = split(task);
  const n = task.history.length;
  return {
    adjusted: decomposition.adjusted,
    cycles: decomposition.seasonals.map(({ period, values }) => values.slice(n - period)),
    trend: reuse.fit(rest),
  };
}

/** The kept cycles continued over the `count` steps after the fit's history, summed. */
function continuedCycles(cycles: readonly Float64Array[], count: number): Float64Array {
  const out = new Float64Array(count);
  for (const cycle of cycles) for (let j = 0; j < count; j++) out[j] += cycle[j % cycle.length];
  return out;
}

/**
 * Forecasts a later history, `refit.since` observations past the fit, with a kept fit. Without
 * those observations in the history, or without a fit, it fits afresh. So it does where the
 * later history fits a period twice that the fit's did not: the kept fit has no cycle for it.
 */
export function forecastWithMstl(fitted: MstlFit | null, task: ForecastTask): ForecastOutput {
  checkTask(task);
  const reuse = trendModel(task).reuse;
  const since = task.refit?.since ?? 0;
  const { history, horizon } = task;
  if (fitted === null || !reuse || history.length - since !== fitted.adjusted.length) return mstlForecast(task);
  if (usablePeriods(task.seasonLengths ?? [task.seasonLength], history.length).length !== fitted.cycles.length) return mstlForecast(task);
  const seasonal = continuedCycles(fitted.cycles, since + horizon);
  const fitLength = fitted.adjusted.length;
  const adjusted = new Float64Array(fitLength + since);
  adjusted.set(fitted.adjusted);
  for (let t = 0; t < since; t++) adjusted[fitLength + t] = history[fitLength + t] - seasonal[t];
  const rest = reuse.forecast(fitted.trend, { ...trendTask(task, adjusted), refit: { fcd: task.refit?.fcd ?? 0, history: fitted.adjusted, since } });
  return addSeasons(rest, seasonal, since);
}

export const mstl: LocalModel = {
  name: 'mstl',
  forecast: mstlForecast,
  reuse: { fit: fitMstl, forecast: forecastWithMstl as (fitted: unknown, task: ForecastTask) => ForecastOutput },
};
