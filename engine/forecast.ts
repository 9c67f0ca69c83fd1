import { ForecastFailedError, RequestError } from './errors.ts';
import { checkRequestAgainstModel, requireRunnableModel } from './model-checks.ts';
import { contextSeries, globalBatchOptions, planForecasts, requestedQuantiles, seriesAreCoupled, type PlannedForecast } from './plan.ts';
import { buildPrediction, type Prediction } from './predictions.ts';
import type { ForecastRequest } from './request-schema.ts';
import type { Lane } from './task-queue.ts';
import { runGlobalBatch, runLocalTasks } from './worker-pool.ts';

export interface ForecastResponse {
  status: 'completed';
  series: Prediction[][];
}

export interface PlannedPrediction {
  planned: PlannedForecast;
  prediction: Prediction;
}

/** Checks the request against the model and plans its forecasts; throws a RequestError. */
export function prepareForecast(request: ForecastRequest, modelName: string) {
  const model = requireRunnableModel(modelName);
  checkRequestAgainstModel(request, model);
  return { model, planned: planForecasts(request, model) };
}

/**
 * Every (series, forecast creation date) of the request, forecast and scored. Jobs call this on
 * a chunk of the request's series, in the background lane of the thread queue; the synchronous
 * endpoint on the whole request.
 */
export async function computePredictions(request: ForecastRequest, modelName: string, lane: Lane = 'interactive'): Promise<PlannedPrediction[]> {
  const { model, planned } = prepareForecast(request, modelName);
  const tasks = planned.map((p) => p.task);
  // only_as_context series matter only to a model that learns across series: others are not sent them.
  const coupled = seriesAreCoupled(request, model);
  const results = model.loadGlobal
    ? await runGlobalBatch(model.name, tasks, coupled ? contextSeries(request) : [], globalBatchOptions(request), coupled, lane)
    : await runLocalTasks(model.name, tasks, lane);
  const levels = requestedQuantiles(request);
  return planned.map((p, i) => {
    const result = results[i];
    const where = `body.series[${p.seriesIndex}]` + (request.series[p.seriesIndex].fcds ? `.fcds[${p.fcdPosition}]` : '');
    if (!result.ok) {
      if (result.inputError)
        throw new RequestError(422, 'invalid_request', `model '${model.name}' cannot forecast series ${p.seriesIndex}: ${result.message}`, [
          { path: where, message: result.message },
        ]);
      throw new ForecastFailedError(`model '${model.name}' failed on series ${p.seriesIndex} at forecast creation date ${p.fcd}: ${result.message}`);
    }
    if (!result.mean.every(Number.isFinite) || !result.quantiles.every((q) => q.every(Number.isFinite))) {
      throw new ForecastFailedError(`model '${model.name}' produced non-finite values for series ${p.seriesIndex} at forecast creation date ${p.fcd}`);
    }
    return { planned: p, prediction: buildPrediction(request.series[p.seriesIndex], p.fcd, request.horizon, request.freq, levels, result) };
  });
}

/** The synchronous forecast (reference 4.1): every series at every forecast creation date. */
export async function runForecast(request: ForecastRequest, modelName: string): Promise<ForecastResponse> {
  const series: Prediction[][] = request.series.map(() => []);
  for (const { planned, prediction } of await computePredictions(request, modelName)) series[planned.seriesIndex][planned.fcdPosition] = prediction;
  return { status: 'completed', series };
}
