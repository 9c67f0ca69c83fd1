import type { Engine } from './engine.ts';
import { validateForecast, type ValidatedForecast } from './model-checks.ts';
import { contextSeries, planForecasts, requestTaskSettings, seriesAreCoupled, type PlannedForecast } from './plan.ts';
import { buildPrediction } from './predictions.ts';
import type { ForecastRequest } from './request-schema.ts';
import type { ForecastResponse, Prediction } from './response-schema.ts';
import { quantileLevels, runTasks } from './tasks.ts';
import type { Lane } from './threads/queue-order.ts';

/** The stable pipeline: a validated request planned, run through the forecast core, and scored. */

export interface PlannedPrediction {
  planned: PlannedForecast;
  prediction: Prediction;
}

/**
 * Every (series, forecast creation date) of the request, forecast and scored. Jobs call this on
 * a chunk of the request's series, in the background lane of the thread queue; the synchronous
 * endpoint on the whole request. A caller that has validated the request already passes what
 * validation resolved.
 */
export async function computePredictions(
  engine: Engine,
  request: ForecastRequest,
  modelName: string,
  lane: Lane = 'interactive',
  validated: ValidatedForecast = validateForecast(engine.settings, request, modelName),
  refitFcds?: readonly (readonly number[])[],
): Promise<PlannedPrediction[]> {
  const { model, covariates } = validated;
  const planned = planForecasts(request, model, covariates, refitFcds);
  // only_as_context series matter only to a model that learns across series: others are not sent them.
  const coupled = seriesAreCoupled(request, model);
  const batch = {
    model,
    tasks: planned.map((p) => p.task),
    coupled,
    context: coupled ? contextSeries(request, covariates) : [],
    options: requestTaskSettings(request, model).batch,
    lane,
  };
  const outputs = await runTasks(engine, batch, (i) => {
    const p = planned[i];
    const field = ['series', p.seriesIndex, ...(request.series[p.seriesIndex].fcds ? ['fcds', p.fcdPosition] : [])];
    return {
      forecast: `series ${p.seriesIndex} at forecast creation date ${p.fcd}`,
      subject: `series ${p.seriesIndex}`,
      field: { root: 'request', path: field },
      fieldMessage: (reason) => reason,
    };
  });
  const levels = quantileLevels(request.quantiles);
  return planned.map((p, i) => {
    const prediction = buildPrediction(request.series[p.seriesIndex], p.fcd, request.horizon, request.freq, levels, outputs[i]);
    // Said only under a refit policy, so that other responses keep the reference's shape.
    return { planned: p, prediction: request.refit === 'every' ? prediction : { ...prediction, refitted: p.refitted } };
  });
}

/** The synchronous forecast (reference 4.1): every series at every forecast creation date. */
export async function runForecast(engine: Engine, request: ForecastRequest, modelName: string): Promise<ForecastResponse> {
  const series: Prediction[][] = request.series.map(() => []);
  for (const { planned, prediction } of await computePredictions(engine, request, modelName)) series[planned.seriesIndex][planned.fcdPosition] = prediction;
  return { status: 'completed', series };
}
