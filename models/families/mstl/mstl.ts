import { aarima } from '../arima/aarima.ts';
import { aets } from '../ets/aets.ts';
import { mstlOptions } from './mstl-config.ts';
import { mstlDecompose, seasonalForecast } from './mstl-decomposition.ts';
import { ModelInputError, type ForecastOutput, type ForecastTask, type LocalModel } from '../../contract/model-interface.ts';

/**
 * `mstl`: multiple seasonalities, as statsforecast's MSTL forecasts them. The history is split by
 * MSTL (models/families/mstl/mstl-decomposition.ts) into one seasonal component per period (hourly data: the day,
 * 24, and the week, 168) and the rest; the rest (trend + remainder) is forecast by a non-seasonal
 * model, `aets` by default (statsforecast: AutoETS 'ZZN') or `aarima`, and each seasonal
 * component by its last cycle repeated. The quantiles are the trend model's, shifted by the
 * seasonal forecast: the seasonal components are taken as known, as the reference does.
 */

const TREND_MODELS = { aets, aarima } as const;
export type MstlTrendModel = keyof typeof TREND_MODELS;

export function mstlForecast(task: ForecastTask): ForecastOutput {
  const { history, horizon } = task;
  if (history.length < 2) throw new ModelInputError(`mstl needs at least 2 observations of history; got ${history.length}`);
  if (!(Number.isInteger(horizon) && horizon >= 1)) throw new ModelInputError(`mstl needs a whole horizon of at least 1; got ${horizon}`);
  const decomposition = mstlDecompose(history, task.seasonLengths ?? [task.seasonLength]);
  const trendModel = TREND_MODELS[mstlOptions(task).trendModel];
  const rest = trendModel.forecast({
    history: decomposition.adjusted,
    horizon,
    quantiles: task.quantiles,
    seasonLength: 1,
    ...(task.covariates && { covariates: task.covariates }),
  });
  const seasonal = seasonalForecast(decomposition, horizon);
  const shift = (values: Float64Array) => values.map((v, j) => v + seasonal[j]);
  return { mean: shift(rest.mean), quantiles: rest.quantiles.map(shift) };
}

export const mstl: LocalModel = { name: 'mstl', forecast: mstlForecast };
