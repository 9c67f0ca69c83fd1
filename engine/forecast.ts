import { ForecastFailedError, RequestError } from './errors.ts';
import { checkRequestAgainstModel, requireRunnableModel } from './model-checks.ts';
import { planForecasts, requestedQuantiles } from './plan.ts';
import { buildPrediction, type Prediction } from './predictions.ts';
import type { ForecastRequest } from './request-schema.ts';
import { runLocalTasks } from './worker-pool.ts';

export interface ForecastResponse {
  status: 'completed';
  series: Prediction[][];
}

/** Validates the request against the model; throws a RequestError the caller can act on. */
export function prepareForecast(request: ForecastRequest, modelName: string) {
  const model = requireRunnableModel(modelName);
  checkRequestAgainstModel(request, model);
  return { model, planned: planForecasts(request, model) };
}

/** The synchronous forecast (reference 4.1): every series at every forecast creation date. */
export async function runForecast(request: ForecastRequest, modelName: string): Promise<ForecastResponse> {
  const { model, planned } = prepareForecast(request, modelName);
  const results = await runLocalTasks(model.name, planned.map((p) => p.task));
  const levels = requestedQuantiles(request);
  const series: Prediction[][] = request.series.map(() => []);
  planned.forEach((p, i) => {
    const result = results[i];
    const where = `body.series[${p.seriesIndex}]` + (request.series[p.seriesIndex].fcds ? `.fcds[${p.fcdPosition}]` : '');
    if (!result.ok) {
      if (result.inputError) throw new RequestError(422, 'invalid_request', `model '${model.name}' cannot forecast series ${p.seriesIndex}: ${result.message}`, [{ path: where, message: result.message }]);
      throw new ForecastFailedError(`model '${model.name}' failed on series ${p.seriesIndex} at forecast creation date ${p.fcd}: ${result.message}`);
    }
    if (!result.mean.every(Number.isFinite) || !result.quantiles.every((q) => q.every(Number.isFinite))) {
      throw new ForecastFailedError(`model '${model.name}' produced non-finite values for series ${p.seriesIndex} at forecast creation date ${p.fcd}`);
    }
    series[p.seriesIndex][p.fcdPosition] = buildPrediction(request.series[p.seriesIndex], p.fcd, request.horizon, request.freq, levels, result);
  });
  return { status: 'completed', series };
}
