import { z } from 'zod';
import { Covariate } from './covariates/registry.ts';
import { FREQUENCIES } from './frequencies.ts';
import { bulkArray } from './bulk-array.ts';
import { futureIndexFits, instantMillis, scanIndex } from './time-index.ts';
import { modelConfigVariants } from '../models/contract/model-registry.ts';

/**
 * The forecast request of the API reference (sections 2.1-2.4), as zod schemas. These schemas
 * validate requests, type the engine and generate the OpenAPI document: no other copy exists.
 * Objects are strict: an unknown property is a typo the caller wants to hear about.
 */

export const MAX_HORIZON = 10_000;
export const DEFAULT_QUANTILES = [0.1, 0.9, 0.4, 0.5];

/**
 * A numeric target string, as JSON Schema can state it (the document shows this pattern): ASCII
 * digits only (a Unicode digit is no number to Number()), JSON's whitespace around it, and at most
 * 200 integer digits with a two-digit exponent, so that every string the pattern admits is a
 * finite number (at most about 1e299) rather than one that overflows to Infinity after passing.
 */
const NUMERIC_STRING = /^[ \t\n\r]*[-+]?([0-9]{1,200}(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]{1,2})?[ \t\n\r]*$/;

/** A target value: a finite number, or a numeric string (the reference allows both). */
export const TargetValue = z
  .union([z.number(), z.string().regex(NUMERIC_STRING, 'expected a number or a numeric string')], { error: 'expected a number or a numeric string' })
  .transform((v) => Number(v))
  .refine(Number.isFinite, 'expected a finite number')
  .meta({ description: 'A number, or a string holding a number.' });

/** What the fast path of a bulk array accepts as it is: values the element schemas pass unchanged. */
function allFiniteNumbers(values: unknown[]): boolean {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!(typeof v === 'number' && Number.isFinite(v))) return false;
  }
  return true;
}
/** The index's scan is kept with the array: the order check below and planning read it again. */
const allTimestamps = (values: unknown[]): boolean => scanIndex(values).valid;

/** A calendar date of the proleptic Gregorian calendar, years 0000-9999: days per month, and 29 February in leap years only. */
const DATE_PATTERN =
  '[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))' +
  '|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29';
/** A time of day after `T` or a space: HH:MM, optional :SS with a fraction of 1-9 digits, optional `Z` or offset (+HH:MM, +HHMM). */
const TIME_PATTERN = '[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?(?:Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])?';

/**
 * Exactly the entries engine/timestamp-scan.ts reads (test/contract/patterns.test.ts compares
 * them), as a regular expression the OpenAPI document can carry, so that a generated client and
 * a schema-driven test tool know which strings are dates. Validation itself runs the scanner.
 */
export const TIMESTAMP_PATTERN = new RegExp(`^(?:${DATE_PATTERN})(?:${TIME_PATTERN})?$`);

export const Timestamp = z
  .string()
  .refine((s) => !Number.isNaN(instantMillis(s)), 'expected a date (YYYY-MM-DD) or an ISO 8601 date-time')
  .meta({
    pattern: TIMESTAMP_PATTERN.source,
    description: 'A date (`YYYY-MM-DD`) or an ISO 8601 date-time (`YYYY-MM-DDTHH:MM:SS`, optional fraction and offset).',
    example: '2024-01-31',
  });

/** Covariate values: numbers for most models; strings only for models that take categories. */
const CovariateValue = z.union([z.number(), z.string()], { error: 'expected a number or a string' });
/**
 * `__proto__` is refused before validation, by the JSON parser (400 `invalid_json`): as a key it
 * could replace an object's prototype. The document says so, so that no client sends it.
 */
const VariableName = z
  .string()
  .min(1)
  .max(100)
  .refine((name) => name !== '__proto__', 'a variable may not be named __proto__')
  .meta({ not: { const: '__proto__' } });

export const InputSerie = z
  .strictObject({
    target: bulkArray(TargetValue, allFiniteNumbers, 1),
    index: bulkArray(Timestamp, allTimestamps, 1),
    hist_variables: z.record(VariableName, z.array(CovariateValue)).default({}),
    future_variables_index: z.array(Timestamp).default([]).meta({
      description:
        "The future variables' dates, one per value, with future_variables only: alongside the target they are the index's own instants, and past it they increase strictly.",
    }),
    future_variables: z.record(VariableName, z.array(CovariateValue)).default({}),
    static_variables: z.record(VariableName, z.union([z.number(), z.string()])).default({}),
    fcds: z
      .array(z.int().min(1, 'a forecast creation date needs at least one observation of history'))
      .min(1, 'give at least one forecast creation date, or null for the latest')
      .nullable()
      .default(null),
    only_as_context: z.boolean().default(false),
  })
  .meta({ id: 'InputSerie' });

/**
 * model_config: one variant per model that takes one, each with the `config` its registry entry
 * declares (models/contract/model-config.ts). The engine reads only the settings models share.
 */
const [firstVariant, ...otherVariants] = modelConfigVariants().map(({ name, config }) => z.strictObject({ model: z.literal(name), config: config.schema }));
export const ModelConfig = z.discriminatedUnion('model', [firstVariant, ...otherVariants]).meta({ id: 'ModelConfig' });
export type ModelConfig = z.output<typeof ModelConfig>;

/** A backtest's refit policy, in the stable and the beta requests (engine/tasks.ts refitDates). */
export const RefitPolicy = z.union([z.enum(['every', 'once']), z.int().min(1)]).default('every');
export type RefitPolicy = z.output<typeof RefitPolicy>;

export const ForecastRequest = z
  .strictObject({
    series: z.array(InputSerie).min(1),
    horizon: z.int().min(1).max(MAX_HORIZON),
    freq: z.enum(FREQUENCIES),
    context: z.int().min(1).nullable().default(null),
    quantiles: z
      .array(z.number().gt(0).lt(1))
      .refine((q) => new Set(q).size === q.length, 'quantiles must be distinct')
      .meta({ uniqueItems: true })
      .nullable()
      .default(null),
    covariates: z.array(Covariate).nullable().default(null),
    model_config: ModelConfig.nullable().default(null),
    refit: RefitPolicy.meta({
      description:
        "Backtests: at which of a series' forecast creation dates (in date order) the model is refitted. `every` (default), `once` (the first), or n: every n-th from the first. Between refits a model that can keep its fitted parameters (`theta`, `aets`, `ces`) only takes in the new observations; others refit at every date. Each prediction then says whether it was `refitted`.",
    }),
  })
  .superRefine(checkLengths)
  .meta({ id: 'ForecastRequest' });

export type ForecastRequest = z.output<typeof ForecastRequest>;
export type InputSerie = z.output<typeof InputSerie>;

/** Rules between fields that a single field's schema cannot see (section 2.2). */
function checkLengths(req: z.output<z.ZodObject<any>>, ctx: z.RefinementCtx): void {
  const { series, horizon, freq } = req as { series: InputSerie[]; horizon: number; freq: (typeof FREQUENCIES)[number] };
  series.forEach((s, i) => {
    const at = (...rest: (string | number)[]) => ['series', i, ...rest];
    const n = s.target.length;
    if (s.index.length !== n) {
      ctx.addIssue({ code: 'custom', path: at('index'), message: `index has ${s.index.length} entries; target has ${n}: they must be the same length` });
    } else {
      const times = scanIndex(s.index).instant;
      let bad = 0;
      for (let j = 1; j < times.length && bad === 0; j++) if (!(times[j] > times[j - 1])) bad = j;
      if (bad > 0)
        ctx.addIssue({
          code: 'custom',
          path: at('index', bad),
          message: `index ${notAfter(s.index, bad)}`,
        });
      else if (!Number.isNaN(times[n - 1]) && !futureIndexFits(s.index[n - 1], freq, horizon))
        ctx.addIssue({
          code: 'custom',
          path: ['horizon'],
          message: `series[${i}] ends at ${s.index[n - 1]}: ${horizon} steps of ${freq} after it pass the year 9999, the last a date of the index can name`,
        });
    }
    s.fcds?.forEach((k, j) => {
      if (k > n)
        ctx.addIssue({ code: 'custom', path: at('fcds', j), message: `forecast creation date ${k} is past the end of the target (${n} observations)` });
    });
    const lastFcd = s.fcds ? Math.max(...s.fcds) : n;
    const histLengths = [...new Set([n, lastFcd])];
    for (const [name, values] of Object.entries(s.hist_variables)) {
      if (!histLengths.includes(values.length)) {
        ctx.addIssue({
          code: 'custom',
          path: at('hist_variables', name),
          message: `has ${values.length} values; expected ${histLengths.join(' or ')} (the target length${s.fcds ? ' or the largest forecast creation date' : ''})`,
        });
      }
    }
    const futureLengths = [...new Set([lastFcd + horizon, n + horizon])];
    for (const [name, values] of Object.entries(s.future_variables)) {
      if (!futureLengths.includes(values.length)) {
        ctx.addIssue({
          code: 'custom',
          path: at('future_variables', name),
          message: `has ${values.length} values; expected ${futureLengths.join(' or ')} (history length${s.fcds ? ' up to the largest forecast creation date' : ''} + horizon ${horizon})`,
        });
      }
    }
    const futureLength = Object.values(s.future_variables)[0]?.length;
    if (s.future_variables_index.length > 0 && futureLength === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: at('future_variables_index'),
        message: 'dates future variables, but the series has none: send future_variables too, or leave it out',
      });
    } else if (s.future_variables_index.length > 0 && s.future_variables_index.length !== futureLength) {
      ctx.addIssue({
        code: 'custom',
        path: at('future_variables_index'),
        message: `has ${s.future_variables_index.length} entries; the future variables have ${futureLength} values`,
      });
    } else if (s.future_variables_index.length > 0 && s.index.length === n) {
      const misdated = misdatedFutureEntry(s.future_variables_index, s.index);
      if (misdated !== null) ctx.addIssue({ code: 'custom', path: at('future_variables_index', misdated.entry), message: misdated.message });
    }
  });
}

/** Why entry `j` of dates that must increase is out of order. */
const notAfter = (dates: readonly string[], j: number) => `must increase strictly: ${dates[j]} does not come after ${dates[j - 1]}`;

/**
 * The first entry of `future_variables_index` that does not date the future variables as the
 * series does: its entries alongside the target name the index's own instants, and those past it
 * increase strictly. Null when every entry does.
 */
function misdatedFutureEntry(futureIndex: string[], index: string[]): { entry: number; message: string } | null {
  const future = scanIndex(futureIndex).instant;
  const own = scanIndex(index).instant;
  for (let j = 0; j < future.length; j++) {
    if (Number.isNaN(future[j])) return null;
    if (j < own.length && future[j] !== own[j])
      return { entry: j, message: `${futureIndex[j]} is not index[${j}] (${index[j]}): the future variables' dates follow the series' own, then continue it` };
    if (j > 0 && !(future[j] > future[j - 1])) return { entry: j, message: notAfter(futureIndex, j) };
  }
  return null;
}
