import { z } from 'zod';
import type { FieldPath } from '../errors.ts';
import type { Freq } from '../frequencies.ts';
import type { StepPeriods } from './periods.ts';

/**
 * One kind of generated covariate (reference 2.3: holidays, events, float, forex,
 * temporal_features): its config schema (which the request schema and the OpenAPI document use),
 * and how one covariate of the kind is checked against a request and turned into named columns.
 * Every kind lives in a module of its own and is listed in registry.ts.
 */

/**
 * `hist`: not known in advance (exchange rates), cut at each forecast creation date like
 * `hist_variables`; `future`: known in advance (calendars, registered float sources), used through
 * the horizon like `future_variables`.
 */
export type ColumnKind = 'hist' | 'future';

export interface GeneratedColumn {
  readonly name: string;
  readonly kind: ColumnKind;
  /** The column over one series' steps (their stretches of time and wall-clock start times, epoch ms). */
  build(periods: StepPeriods, times: Float64Array): Float64Array;
}

/** What a kind may look at when it checks a covariate of a request. */
export interface CovariateContext {
  readonly freq: Freq;
  /** The request's series (the exchange rates must cover where each one starts). */
  readonly series: readonly { readonly index: readonly string[] }[];
  /** Where float data sources are registered (FLOAT_SOURCES_DIR). */
  readonly floatSourcesDir: string;
}

/** An error of one covariate; the path is inside its `config` (`['country']`; `[]` for the config as a whole). */
export interface ConfigError {
  readonly path: FieldPath;
  readonly message: string;
}

export type Resolution = { readonly columns: readonly GeneratedColumn[] } | { readonly errors: readonly ConfigError[] };

export interface CovariateKind<Type extends string = string, Schema extends z.ZodType = z.ZodType> {
  readonly type: Type;
  readonly config: Schema;
  /** Checks the covariate (unknown country, currency or source; data that does not cover the series) and names its columns. */
  resolve(config: z.output<Schema>, context: CovariateContext): Resolution;
}

export const listed = (xs: Iterable<string>): string => [...xs].join(', ');

/**
 * A code of a fixed list (countries, currencies), accepted in upper or lower case as before, as an
 * enum the OpenAPI document shows: a client then knows every value the server takes.
 */
export function codeOf<const C extends string>(codes: readonly C[], what: string) {
  const values = [...codes, ...codes.map((c) => c.toLowerCase())] as [string, ...string[]];
  return z.enum(values, { error: `expected ${what}, in upper or lower case: ${listed(codes)}` });
}
