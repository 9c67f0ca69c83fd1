import { horizonOutOfRange } from '../models/families/foundation/horizon-range.ts';
import { availability, availableModels, modelEntry, MODEL_NAMES, type ModelEntry } from '../models/contract/model-registry.ts';
import type { CovariateKind as ModelCovariateKind, ModelSettings } from '../models/contract/model-interface.ts';
import { resolveCovariates, type CovariateGenerator } from './covariates/generator.ts';
import type { EngineSettings } from './engine.ts';
import { EngineError, invalidRequest, requestField, type FieldError, type FieldPath } from './errors.ts';
import type { ForecastRequest } from './request-schema.ts';

/** The model entry for a name, or an error that names the model and what can run instead. */
export function requireRunnableModel(name: string, settings: ModelSettings): ModelEntry {
  const entry = modelEntry(name);
  if (!entry) {
    throw invalidRequest(`unknown model '${name}'`, [{ root: 'model', path: [], message: `must be one of ${MODEL_NAMES.join(', ')}` }]);
  }
  // Foundation models with an adapter are available once their export is installed and intact.
  // The client hears that, without server paths; the operator's hint goes to the log.
  const found = availability(entry, settings);
  if (!found.runnable) throw modelUnavailable(name, found.reason, settings, found.hint);
  return entry;
}

/** The refusal of a model that cannot run here: its reason, and what runs instead. */
export function modelUnavailable(name: string, reason: string, settings: ModelSettings, operatorDetail: string | null = null): EngineError {
  const message = `model '${name}' is not available on this server: ${reason}. Models available here: ${availableModels(settings).join(', ')}.`;
  return new EngineError('model_unavailable', message, [{ root: 'model', path: [], message }], operatorDetail);
}

const KIND_LABEL: Record<ModelCovariateKind, string> = {
  historical: 'historical variables (hist_variables)',
  future: 'future variables (future_variables)',
  static: 'static variables (static_variables)',
  string: 'string (categorical) covariate values',
  generated: 'generated covariates (covariates)',
};

/** Models of this server that consume a covariate kind. */
export function modelsSupporting(kind: ModelCovariateKind): string {
  return MODEL_NAMES.filter((n) => modelEntry(n)?.capabilities.covariates.includes(kind)).join(', ');
}

/** The refusal of a covariate kind a model does not use, naming the models that do. */
export function unusedCovariate(model: ModelEntry, path: FieldPath, kind: ModelCovariateKind): FieldError {
  return requestField(path, `model '${model.name}' does not use ${KIND_LABEL[kind]}; models that do: ${modelsSupporting(kind) || 'none on this server'}`);
}

/** A request checked against its model, with its generated covariates resolved (null when it asks for none). */
export interface ValidatedForecast {
  readonly model: ModelEntry;
  readonly covariates: CovariateGenerator | null;
}

/**
 * Everything about a request that depends on its model, without planning a forecast: the model
 * runs here, its model_config is its own, it consumes every covariate kind the request gives
 * (covariates are refused, never silently dropped), and the generated covariates resolve (known
 * countries, currencies and sources; data that covers the series). The resolved covariates come
 * back, so the planner does not resolve them again.
 */
export function validateForecast(settings: EngineSettings, request: ForecastRequest, modelName: string): ValidatedForecast {
  const model = requireRunnableModel(modelName, settings.models);
  return { model, covariates: checkRequestAgainstModel(request, model, settings) };
}

/**
 * The refusal of a horizon the installed model cannot forecast (its graph bounds it), at the
 * request's own field: checked here so that nothing runs (a job is refused at submission).
 */
export function horizonOutOfRangeField(model: ModelEntry, settings: ModelSettings, horizon: number, path: FieldPath): FieldError | null {
  const range = model.horizonRange?.(settings);
  const problem = range ? horizonOutOfRange(model.name, range, horizon) : null;
  return problem ? requestField(path, problem) : null;
}

/** The request's errors against its model (thrown together), else its generated covariates. */
export function checkRequestAgainstModel(
  request: ForecastRequest,
  model: ModelEntry,
  settings: Pick<EngineSettings, 'models' | 'floatSourcesDir'>,
): CovariateGenerator | null {
  const errors: FieldError[] = [];
  const horizon = horizonOutOfRangeField(model, settings.models, request.horizon, ['horizon']);
  if (horizon) errors.push(horizon);
  const supports = (kind: ModelCovariateKind) => model.capabilities.covariates.includes(kind);
  let covariates: CovariateGenerator | null = null;

  if (request.model_config && request.model_config.model !== model.name) {
    errors.push(requestField(['model_config', 'model'], `is '${request.model_config.model}' but the request's model is '${model.name}'`));
  }
  if (request.covariates?.length) {
    if (!supports('generated')) errors.push(unusedCovariate(model, ['covariates'], 'generated'));
    else {
      // Exchange rates are not known in advance: they reach models as historical variables.
      request.covariates.forEach((c, k) => {
        if (c.type === 'forex' && !supports('historical'))
          errors.push(
            requestField(
              ['covariates', k],
              `model '${model.name}' cannot use forex: exchange rates are not known in advance, so they reach a model as historical variables, which it does not use; models that do: ${modelsSupporting('historical') || 'none on this server'}`,
            ),
          );
      });
      const resolved = resolveCovariates(request, settings.floatSourcesDir);
      errors.push(...resolved.errors);
      covariates = resolved.generator;
    }
  }
  request.series.forEach((s, i) => {
    const groups: [string, Record<string, unknown[]> | Record<string, unknown>, ModelCovariateKind][] = [
      ['hist_variables', s.hist_variables, 'historical'],
      ['future_variables', s.future_variables, 'future'],
      ['static_variables', s.static_variables, 'static'],
    ];
    for (const [field, values, kind] of groups) {
      if (Object.keys(values).length === 0) continue;
      if (!supports(kind)) {
        errors.push(unusedCovariate(model, ['series', i, field], kind));
        continue;
      }
      if (!supports('string')) {
        for (const [name, v] of Object.entries(values)) {
          const hasString = Array.isArray(v) ? v.some((x) => typeof x === 'string') : typeof v === 'string';
          if (hasString) errors.push(unusedCovariate(model, ['series', i, field, name], 'string'));
        }
      }
    }
  });
  if (errors.length > 0) throw invalidRequest('the request does not fit the chosen model', errors);
  return covariates;
}
