import { requestField, type FieldError } from '../errors.ts';
import type { ForecastRequest } from '../request-schema.ts';
import type { ColumnKind, GeneratedColumn } from './kind.ts';
import { stepPeriods } from './periods.ts';
import { covariateKind } from './registry.ts';

/**
 * Generated covariates (reference 2.3, the request's `covariates`): each entry becomes one or more
 * named numeric columns on every series' own index, over its history and the horizon of its latest
 * forecast creation date. The planner cuts them per creation date like the caller's variables:
 * `hist` columns (exchange rates) up to the date, `future` columns (calendars, float sources)
 * through the horizon. Resolved once, when the request is validated, then handed to the planner.
 */

export interface GeneratedColumns {
  readonly hist: Record<string, Float64Array>;
  readonly future: Record<string, Float64Array>;
}

export interface CovariateGenerator {
  /** Column names and kinds, in request order. */
  readonly columns: readonly { name: string; kind: ColumnKind }[];
  /** The columns over the given wall-clock times (epoch ms) of one series. */
  build(times: Float64Array): GeneratedColumns;
}

export type CovariateResolution =
  { readonly generator: CovariateGenerator | null; readonly errors: readonly [] } | { readonly generator: null; readonly errors: readonly FieldError[] };

/**
 * The request's generated covariates, checked: every kind's own checks (unknown countries,
 * currencies, data sources or columns, data that does not cover a series), then names that clash
 * (a covariate listed twice, a caller's variable named like a generated column). The generator is
 * null when the request asks for none.
 */
export function resolveCovariates(request: ForecastRequest, floatSourcesDir: string): CovariateResolution {
  const covariates = request.covariates ?? [];
  if (covariates.length === 0) return { generator: null, errors: [] };
  const context = { freq: request.freq, series: request.series, floatSourcesDir };
  const errors: FieldError[] = [];
  const columns: { column: GeneratedColumn; from: number }[] = [];
  covariates.forEach((covariate, k) => {
    const resolution = covariateKind(covariate.type).resolve(covariate.config, context);
    if ('errors' in resolution) for (const e of resolution.errors) errors.push(requestField(['covariates', k, 'config', ...e.path], e.message));
    else for (const column of resolution.columns) columns.push({ column, from: k });
  });
  errors.push(...nameClashes(request, columns));
  if (errors.length > 0) return { generator: null, errors };
  return {
    generator: {
      columns: columns.map(({ column }) => ({ name: column.name, kind: column.kind })),
      build(times) {
        const periods = stepPeriods(times, request.freq);
        const hist: Record<string, Float64Array> = {};
        const future: Record<string, Float64Array> = {};
        for (const { column } of columns) (column.kind === 'hist' ? hist : future)[column.name] = column.build(periods, times);
        return { hist, future };
      },
    },
    errors: [],
  };
}

function nameClashes(request: ForecastRequest, columns: { column: GeneratedColumn; from: number }[]): FieldError[] {
  const errors: FieldError[] = [];
  const firstOf = new Map<string, number>();
  const clashing = new Set<number>();
  for (const { column, from } of columns) {
    const earlier = firstOf.get(column.name);
    if (earlier === undefined) firstOf.set(column.name, from);
    else if (!clashing.has(from)) {
      clashing.add(from);
      const again = earlier === from ? ' twice: list each component once' : `, as covariates[${earlier}] does: list each covariate once`;
      errors.push(requestField(['covariates', from], `generates the column '${column.name}'${again}`));
    }
  }
  request.series.forEach((s, i) => {
    for (const [field, variables] of [
      ['hist_variables', s.hist_variables],
      ['future_variables', s.future_variables],
      ['static_variables', s.static_variables],
    ] as const) {
      for (const name of Object.keys(variables)) {
        if (firstOf.has(name)) errors.push(requestField(['series', i, field, name], 'has the name of a generated covariate column; rename it'));
      }
    }
  });
  return errors;
}
