import { RequestError, type FieldError } from '../errors.ts';
import { isSubDaily, type Freq } from '../frequencies.ts';
import type { Covariate, ForecastRequest } from '../request-schema.ts';
import { wallClockMillis } from '../time-index.ts';
import { eventColumn, eventCountries, eventsOf } from './events.ts';
import { floatCovariate } from './float.ts';
import { describeFloatSource, floatSourcesDir, listFloatSources, readFloatColumn } from './float-sources.ts';
import { forexCovariate, forexCurrencies, forexFirstDay, PUBLICATION_HOUR_MS } from './forex.ts';
import { holidayCountries, holidaysCovariate } from './holidays.ts';
import { dayOf, stepPeriods, type StepPeriods } from './periods.ts';
import { temporalColumns } from './temporal.ts';

/**
 * Generated covariates (reference 2.3, the request's `covariates`): each entry becomes one or more
 * named numeric columns, built on every series' own index and frequency, over its history and
 * the horizon of its latest forecast creation date. The planner cuts them per creation date like
 * the caller's variables: `hist` columns (exchange rates, not known in advance) up to the date,
 * `future` columns (calendars, registered float sources) through the horizon.
 */

export type ColumnKind = 'hist' | 'future';

export interface GeneratedColumns {
  readonly hist: Record<string, Float64Array>;
  readonly future: Record<string, Float64Array>;
}

interface ColumnSpec {
  readonly name: string;
  readonly kind: ColumnKind;
  /** Position of the request covariate it comes from. */
  readonly from: number;
  readonly build: (periods: StepPeriods, times: Float64Array) => Float64Array;
}

export interface CovariateGenerator {
  /** Column names and kinds, in request order. */
  readonly columns: readonly { name: string; kind: ColumnKind }[];
  /** The columns over the given wall-clock times (epoch ms) of one series. */
  build(times: Float64Array): GeneratedColumns;
}

const list = (xs: Iterable<string>) => [...xs].join(', ');

function holidayName(c: Extract<Covariate, { type: 'holidays' }>['config']): string {
  const cc = c.country.toUpperCase();
  switch (c.smoothing_method) {
    case 'auto':
    case 'none':
      return `holidays:${cc}`;
    case 'gaussian':
    case 'exponential':
      return `holidays:${cc}:${c.smoothing_method}:w${c.window_size}:s${c.sigma}`;
    case 'ramp':
      return `holidays:${cc}:ramp:${c.ramp_days}`;
    case 'flat':
      return `holidays:${cc}:flat:w${c.window_size}`;
  }
}

/** Column specs of every covariate, and the errors of their configs. */
function resolve(covariates: readonly Covariate[], freq: Freq): { specs: ColumnSpec[]; errors: FieldError[] } {
  const specs: ColumnSpec[] = [];
  const errors: FieldError[] = [];
  covariates.forEach((cov, k) => {
    const at = `body.covariates[${k}].config`;
    switch (cov.type) {
      case 'holidays': {
        const cc = cov.config.country.toUpperCase();
        if (!holidayCountries().has(cc)) {
          errors.push({
            path: `${at}.country`,
            message: `no holiday calendar for '${cov.config.country}'; countries with one: ${list([...holidayCountries()].sort())}`,
          });
          return;
        }
        specs.push({ name: holidayName(cov.config), kind: 'future', from: k, build: (p) => holidaysCovariate(cov.config, p, freq) });
        return;
      }
      case 'events': {
        const country = cov.config.country === 'Global' ? 'Global' : cov.config.country.toUpperCase();
        const events = eventsOf(country);
        if (events.length === 0) {
          errors.push({ path: `${at}.country`, message: `the events calendar has no events for '${cov.config.country}'; it has: ${list(eventCountries())}` });
          return;
        }
        for (const e of events) specs.push({ name: `events:${country}:${e.event}`, kind: 'future', from: k, build: (p) => eventColumn(e, p, freq) });
        return;
      }
      case 'forex': {
        const known = new Set(forexCurrencies());
        const base = cov.config.base.toUpperCase();
        const target = cov.config.target.toUpperCase();
        let ok = true;
        for (const [field, code] of [
          ['base', base],
          ['target', target],
        ] as const) {
          if (!known.has(code)) {
            errors.push({ path: `${at}.${field}`, message: `no ECB reference rate for '${cov.config[field]}'; currencies: ${list(known)}` });
            ok = false;
          }
        }
        if (ok) specs.push({ name: `forex:${base}/${target}`, kind: 'hist', from: k, build: (p) => forexCovariate(base, target, p, freq) });
        return;
      }
      case 'float': {
        const sources = listFloatSources();
        const file = sources.get(cov.config.data_source);
        if (!file) {
          const message =
            sources.size === 0
              ? `unknown data source '${cov.config.data_source}': no data sources are registered (Parquet or CSV files in ${floatSourcesDir()})`
              : `unknown data source '${cov.config.data_source}'; registered data sources: ${list(sources.keys())}`;
          errors.push({ path: `${at}.data_source`, message });
          return;
        }
        let source;
        try {
          source = describeFloatSource(cov.config.data_source, file);
        } catch (e) {
          errors.push({ path: `${at}.data_source`, message: `data source '${cov.config.data_source}' cannot be read: ${(e as Error).message}` });
          return;
        }
        if (!source.timeColumn) {
          errors.push({
            path: `${at}.data_source`,
            message: `data source '${source.name}' has no date or timestamp column (columns: ${source.columns.map((c) => `${c.name} ${c.type}`).join(', ')})`,
          });
          return;
        }
        if (!source.numericColumns.includes(cov.config.column)) {
          const exists = source.columns.some((c) => c.name === cov.config.column);
          errors.push({
            path: `${at}.column`,
            message: `${exists ? `column '${cov.config.column}' of data source '${source.name}' is not numeric` : `data source '${source.name}' has no column '${cov.config.column}'`}; numeric columns: ${list(source.numericColumns) || 'none'}`,
          });
          return;
        }
        let series;
        try {
          series = readFloatColumn(source, cov.config.column);
        } catch (e) {
          errors.push({ path: `${at}.data_source`, message: `data source '${source.name}' cannot be read: ${(e as Error).message}` });
          return;
        }
        specs.push({ name: `float:${source.name}:${cov.config.column}`, kind: 'future', from: k, build: (p) => floatCovariate(series, p) });
        return;
      }
      case 'temporal_features': {
        // One build per column keeps specs uniform; the features are cheap.
        const names = temporalColumns(cov.config, new Float64Array(0)).map(([name]) => name);
        names.forEach((name, c) => specs.push({ name, kind: 'future', from: k, build: (_p, times) => temporalColumns(cov.config, times)[c][1] }));
        return;
      }
    }
  });
  const firstOf = new Map<string, number>();
  const clashes = new Set<number>();
  for (const s of specs) {
    const earlier = firstOf.get(s.name);
    if (earlier === undefined) firstOf.set(s.name, s.from);
    else if (!clashes.has(s.from)) {
      clashes.add(s.from);
      errors.push({
        path: `body.covariates[${s.from}]`,
        message: `generates the column '${s.name}', as body.covariates[${earlier}] does: list each covariate once`,
      });
    }
  }
  return { specs, errors };
}

/** Every error of the request's generated covariates: configs, coverage of each series, name clashes. */
export function checkGeneratedCovariates(request: ForecastRequest): FieldError[] {
  const covariates = request.covariates ?? [];
  if (covariates.length === 0) return [];
  const { specs, errors } = resolve(covariates, request.freq);
  const names = new Set(specs.map((s) => s.name));
  covariates.forEach((cov, k) => {
    if (cov.type !== 'forex') return;
    const base = cov.config.base.toUpperCase();
    const target = cov.config.target.toUpperCase();
    const first = forexFirstDay(base, target);
    if (first === null) return;
    request.series.forEach((s, i) => {
      const start = stepPeriods(Float64Array.of(wallClockMillis(s.index[0])), request.freq).start[0];
      const day = isSubDaily(request.freq) ? dayOf(start - PUBLICATION_HOUR_MS) : dayOf(start);
      if (day < first) {
        errors.push({
          path: `body.covariates[${k}].config`,
          message: `ECB rates ${base}/${target} start on ${new Date(first).toISOString().slice(0, 10)}; series ${i} starts on ${s.index[0]}, before any rate`,
        });
      }
    });
  });
  request.series.forEach((s, i) => {
    for (const [field, vars] of [
      ['hist_variables', s.hist_variables],
      ['future_variables', s.future_variables],
      ['static_variables', s.static_variables],
    ] as const) {
      for (const name of Object.keys(vars)) {
        if (names.has(name)) errors.push({ path: `body.series[${i}].${field}.${name}`, message: `has the name of a generated covariate column; rename it` });
      }
    }
  });
  return errors;
}

/** The request's generated covariates; a request that fails `checkGeneratedCovariates` is a 422. */
export function covariateGenerator(request: ForecastRequest): CovariateGenerator {
  const errors = checkGeneratedCovariates(request);
  if (errors.length > 0) throw new RequestError(422, 'invalid_request', 'the generated covariates cannot be built', errors);
  const { specs } = resolve(request.covariates ?? [], request.freq);
  return {
    columns: specs.map((s) => ({ name: s.name, kind: s.kind })),
    build(times) {
      const periods = stepPeriods(times, request.freq);
      const hist: Record<string, Float64Array> = {};
      const future: Record<string, Float64Array> = {};
      for (const s of specs) (s.kind === 'hist' ? hist : future)[s.name] = s.build(periods, times);
      return { hist, future };
    },
  };
}
