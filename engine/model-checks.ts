import { availableModels, modelEntry, MODEL_NAMES, whyUnavailable, type ModelEntry } from '../models/registry.ts';
import type { CovariateKind } from '../models/types.ts';
import { checkGeneratedCovariates } from './covariates/generate.ts';
import { RequestError, type FieldError } from './errors.ts';
import type { ForecastRequest } from './request-schema.ts';

/** The model entry for a request, or a 422 that names the model and what can run instead. */
export function requireRunnableModel(name: string): ModelEntry {
  const entry = modelEntry(name);
  if (!entry) {
    throw new RequestError(422, 'invalid_request', `unknown model '${name}'`, [{ path: 'query.model', message: `must be one of ${MODEL_NAMES.join(', ')}` }]);
  }
  // Foundation models with an adapter are available once their export is installed and intact.
  const reason = whyUnavailable(entry);
  if (reason !== null) {
    const message = `model '${name}' is not available on this server: ${reason}. Models available here: ${availableModels().join(', ')}.`;
    throw new RequestError(422, 'model_unavailable', message, [{ path: 'query.model', message }]);
  }
  return entry;
}

const KIND_LABEL: Record<CovariateKind, string> = {
  historical: 'historical variables (hist_variables)',
  future: 'future variables (future_variables)',
  static: 'static variables (static_variables)',
  string: 'string (categorical) covariate values',
  generated: 'generated covariates (covariates)',
};

function modelsSupporting(kind: CovariateKind): string {
  return MODEL_NAMES.filter((n) => modelEntry(n)?.capabilities.covariates.includes(kind)).join(', ');
}

/**
 * Rules that depend on the chosen model: its model_config, and every covariate kind it must
 * consume. Covariates a model cannot use are refused, never silently dropped.
 */
export function checkRequestAgainstModel(request: ForecastRequest, entry: ModelEntry): void {
  const errors: FieldError[] = [];
  const supports = (kind: CovariateKind) => entry.capabilities.covariates.includes(kind);
  const refuse = (path: string, kind: CovariateKind) =>
    errors.push({
      path,
      message: `model '${entry.name}' does not use ${KIND_LABEL[kind]}; models that do: ${modelsSupporting(kind) || 'none on this server'}`,
    });

  if (request.model_config && request.model_config.model !== entry.name) {
    errors.push({ path: 'body.model_config.model', message: `is '${request.model_config.model}' but the request's model is '${entry.name}'` });
  }
  if (request.covariates?.length) {
    if (!supports('generated')) refuse('body.covariates', 'generated');
    // Unknown countries, currencies, data sources or columns, and series the data does not cover.
    else {
      // Exchange rates are not known in advance: they reach models as historical variables.
      request.covariates.forEach((c, k) => {
        if (c.type === 'forex' && !supports('historical')) refuse(`body.covariates[${k}]`, 'historical');
      });
      errors.push(...checkGeneratedCovariates(request));
    }
  }
  request.series.forEach((s, i) => {
    const at = `body.series[${i}]`;
    const groups: [string, Record<string, unknown[]> | Record<string, unknown>, CovariateKind][] = [
      ['hist_variables', s.hist_variables, 'historical'],
      ['future_variables', s.future_variables, 'future'],
      ['static_variables', s.static_variables, 'static'],
    ];
    for (const [field, values, kind] of groups) {
      if (Object.keys(values).length === 0) continue;
      if (!supports(kind)) {
        refuse(`${at}.${field}`, kind);
        continue;
      }
      if (!supports('string')) {
        for (const [name, v] of Object.entries(values)) {
          const hasString = Array.isArray(v) ? v.some((x) => typeof x === 'string') : typeof v === 'string';
          if (hasString) refuse(`${at}.${field}.${name}`, 'string');
        }
      }
    }
  });
  if (errors.length > 0) throw new RequestError(422, 'invalid_request', 'the request does not fit the chosen model', errors);
}
