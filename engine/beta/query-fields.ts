import { z } from 'zod';
import { TOP_DOWN_PROPORTIONS } from '../reconciliation/disaggregation.ts';
import { MIN_TRACE_ESTIMATORS } from '../reconciliation/min-trace-weights.ts';
import { RECONCILIATION_METHODS } from '../reconciliation/reconcile.ts';
import { ModelConfig, RefitPolicy, Timestamp } from '../request-schema.ts';
import { DURATION_HELP, DURATION_PATTERN, durationProblem, parseDuration } from './duration.ts';

/**
 * The fields of the beta request (reference 2.8), each with its own schema. query-schema.ts adds
 * the rules between fields (query-rules.ts) to make the one schema that validates the `query`
 * part, types the engine and generates the OpenAPI document. Objects are strict, as in the
 * stable API: an unknown property is a typo the caller wants to hear about. Forms the reference
 * leaves open are fixed here and listed in docs/api.md ("Beta API").
 */

export const DurationText = z
  .string()
  .superRefine((text, ctx) => {
    if (!parseDuration(text)) ctx.addIssue({ code: 'custom', message: durationProblem(text) });
  })
  .meta({ id: 'BetaDuration', description: `A duration: ${DURATION_HELP}.`, pattern: DURATION_PATTERN, example: '1d' });

export const AGGREGATES = ['sum', 'mean', 'min', 'max', 'first', 'last', 'count', 'median'] as const;
export type Aggregate = (typeof AGGREGATES)[number];

export const Impute = z
  .union([z.strictObject({ const: z.number() }), z.enum(['zero', 'forward_fill', 'linear'])], {
    error: 'impute is {"const": <number>}, "zero", "forward_fill" or "linear"',
  })
  .meta({
    id: 'BetaImpute',
    description: 'How a missing step is filled: a constant, zero, the last value carried forward, or linear interpolation between the neighbouring values.',
  });
export type Impute = z.output<typeof Impute>;

const TimeRole = z.strictObject({ kind: z.literal('time'), frequency: DurationText });
const TargetRole = z.strictObject({
  kind: z.literal('target'),
  aggregate: z.enum(AGGREGATES).meta({
    description:
      'Combines the rows that fall in one step, and the children of a roll-up (first, last and count roll up by sum). Rows at the same time are ordered as uploaded: first takes the first of them, last the last.',
  }),
  impute: Impute.optional(),
});

export const ColumnRole = z
  .union(
    [z.enum(['identifier', 'historical']), z.discriminatedUnion('kind', [TimeRole, TargetRole], { error: 'an object role has kind "time" or "target"' })],
    {
      error: 'a column role is "identifier", "historical", {"kind": "time", "frequency": ...} or {"kind": "target", "aggregate": ..., "impute"?: ...}',
    },
  )
  .meta({ id: 'BetaColumnRole' });
export type ColumnRole = z.output<typeof ColumnRole>;

const Columns = z
  .record(z.string().min(1), ColumnRole)
  .refine((c) => Object.keys(c).length > 0, 'name at least the time and target columns')
  .meta({ minProperties: 1 });
export type Columns = z.output<typeof Columns>;

const INLINE_HELP = '"inline://<part name>" names an uploaded part; a locator (a path, a glob or an object-store URL) is a plain string';
export const UriSource = z.strictObject({ uri: z.string().regex(/^inline:\/\/[\s\S]+$/, `the uri must be inline://<part name>; ${INLINE_HELP}`) });
export const Source = z
  .union([UriSource, z.string().min(1)], { error: `a source is {"uri": "inline://<part name>"} or a locator string; ${INLINE_HELP}` })
  .meta({ id: 'BetaSource' });
export type Source = z.output<typeof Source>;

export const Hierarchies = z.record(z.string().min(1), z.array(z.array(z.string().min(1)).min(1)).min(1)).meta({
  id: 'BetaHierarchies',
  description:
    'Roll-up paths: each key is an identifier column (the finest level), each list the identifiers it rolls up into, finest first: {"sku": [["store", "region"]]}.',
});

/** A locator alone: a source read where it lives (scheduled backtests, which read their data afresh at every run). */
export const LocatorSource = z.string().min(1).meta({
  id: 'BetaLocator',
  description: 'A locator: a path or glob under the data root, or an object-store URL the server enables.',
});

/** The input and covariate fields around a kind of source: any (`Source`), or locators only. */
function sourcedFields(source: typeof Source | typeof LocatorSource, covariateId: string, statesOneOf: boolean) {
  const input = z
    .strictObject({
      source,
      columns: Columns.optional().meta({ description: 'Column name to role (reference 2.8).' }),
      schema: Columns.optional().meta({ description: 'The same map under the name the locator form uses; give exactly one of columns and schema.' }),
      hierarchies: Hierarchies.optional(),
    })
    .superRefine((input, ctx) => {
      if ((input.columns === undefined) === (input.schema === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['columns'], message: 'give the column roles in exactly one of input.columns and input.schema' });
      }
    })
    // The same rule, as the document states it. In a JSON body (scheduled queries) it is stated in
    // prose only: the contract test's generator mishandles this oneOf nested in a JSON body.
    .meta(statesOneOf ? { oneOf: [{ required: ['columns'] }, { required: ['schema'] }] } : { description: 'Give exactly one of columns and schema.' });
  const covariate = z
    .strictObject({
      schema: z.strictObject({
        version: z.literal('0.3', { error: 'the covariate schema version is "0.3"' }),
        source,
        columns: Columns,
      }),
      on: z.array(z.strictObject({ base: z.string().min(1), attached: z.string().min(1) })).min(1),
    })
    .meta({ id: covariateId });
  return { input, covariate };
}

const anySource = sourcedFields(Source, 'BetaCovariate', true);
export const BetaCovariate = anySource.covariate;
export type BetaCovariate = z.output<typeof BetaCovariate>;

export const CutoffEntry = z
  .union(
    [
      z.strictObject({
        every: DurationText,
        start: Timestamp.optional().meta({ description: 'Earliest cutoff; default: the data start plus prediction_length.' }),
        end: Timestamp.optional().meta({ description: 'Latest cutoff, where the cutoffs count back from; default: the end of the data.' }),
        last: z.int().min(1).max(10_000).optional().meta({
          description:
            'Beyond the reference: keep only the last `last` cutoffs, counting back from `end`. With no `end`, they follow the data each run finds (scheduled backtests).',
        }),
      }),
      Timestamp,
    ],
    { error: 'a cutoff is a date or date-time on the frequency grid, or {"every": <duration>, "start"?: ..., "end"?: ..., "last"?: <count>}' },
  )
  .meta({ id: 'BetaCutoff' });
export type CutoffEntry = z.output<typeof CutoffEntry>;

export const SelectorChoice = z
  .union([z.string(), z.array(z.string()).min(1), z.null()], { error: 'a selector choice is "any", null, a value or a list of values' })
  .meta({
    description: '"any": the level keeps this identifier; null: the identifier is aggregated away; a value or list of values: kept, and only those values.',
  });

/** One-step residuals per series and cutoff when the query gives no `residual_window` (docs/decisions/062-one-step-residuals.md). */
export const DEFAULT_RESIDUAL_WINDOW = 20;

export const Reconciliation = z
  .strictObject({
    method: z.enum(RECONCILIATION_METHODS, { error: `method is one of ${RECONCILIATION_METHODS.join(', ')}` }),
    estimator: z
      .enum(MIN_TRACE_ESTIMATORS, { error: `estimator is one of ${MIN_TRACE_ESTIMATORS.join(', ')}` })
      .optional()
      .meta({ description: 'min_trace only; default wls_struct. wls_var, mint_shrink and mint_cov read one-step residuals.' }),
    proportions: z
      .enum(TOP_DOWN_PROPORTIONS, { error: `proportions is one of ${TOP_DOWN_PROPORTIONS.join(', ')}` })
      .optional()
      .meta({ description: 'top_down and middle_out only; default forecast_proportions. The others read the history up to each cutoff.' }),
    middle_level: z
      .array(z.string().min(1))
      .min(1)
      .refine((names) => new Set(names).size === names.length, 'name each identifier of the middle level once')
      .meta({ uniqueItems: true })
      .optional()
      .meta({ description: 'middle_out only, and required there: the identifiers its middle level keeps.' }),
    residual_window: z
      .int()
      .min(1)
      .max(1_000)
      .optional()
      .meta({ description: `One-step residuals per series and cutoff, for wls_var, mint_shrink and mint_cov only; default ${DEFAULT_RESIDUAL_WINDOW}.` }),
  })
  .meta({
    id: 'BetaReconciliation',
    description:
      'Beyond the reference: reconcile the forecasts of every level of the hierarchies, so that each aggregate equals the sum of its bottoms. Each row then carries its `level` and its unreconciled `base_mean`.',
  });
export type Reconciliation = z.output<typeof Reconciliation>;

const notSupported = (what: string) => z.never({ error: `${what} is not supported by this server yet` }).optional();

/** The query's fields around its input and covariates. */
const queryFields = (fields: ReturnType<typeof sourcedFields>) =>
  z.strictObject({
    input: fields.input,
    prediction_length: DurationText,
    context: DurationText.optional().meta({ description: 'History each forecast sees; default: all of it.' }),
    cutoff: z.array(CutoffEntry).min(1).optional().meta({ description: 'Forecast origins (backtests); default: the end of each series.' }),
    quantiles: z
      .array(z.number().gt(0).lt(1))
      .refine((q) => new Set(q).size === q.length, 'quantiles must be distinct')
      .meta({ uniqueItems: true })
      .nullable()
      .optional()
      .meta({ description: 'Default (absent or null): [0.1, 0.9, 0.4, 0.5].' }),
    selector: z.record(z.string().min(1), SelectorChoice).optional(),
    covariates: z.array(fields.covariate).optional(),
    refit: RefitPolicy.meta({
      description:
        "Backtests: at which of a series' cutoffs (in time order) the model is refitted: `every` (default), `once` (the first), or n: every n-th from the first. Between refits a model that can keep its fitted parameters (`theta`, `aets`, `ces`) only takes in the new observations; others refit at every cutoff. The response's `data.refitted` (and a job's metrics.parquet `refitted` column) says which.",
    }),
    model_config: ModelConfig.nullable().default(null).meta({
      description:
        "Beyond the reference: the model's settings, in the same shapes as the stable API's `model_config`; its `model` must be the query string's model. Default: the model's own defaults.",
    }),
    reconciliation: Reconciliation.optional(),
    lead_time: notSupported('lead_time selection (every lead time up to prediction_length is returned)'),
    span: notSupported('span (each row spans one frequency step)'),
    peers: notSupported('peer selection'),
  });

export const BetaQueryFields = queryFields(anySource);
/** The fields of a scheduled backtest's query: its sources are locators (api/routes/schedules.ts). */
export const ScheduledQueryFields = queryFields(sourcedFields(LocatorSource, 'ScheduledBetaCovariate', false));

export type BetaQuery = z.output<typeof BetaQueryFields>;

/** The column roles, wherever the caller put them (input.columns or input.schema). */
export const inputColumns = (query: Pick<BetaQuery, 'input'>): Columns => (query.input.columns ?? query.input.schema)!;

type TimeRole = Extract<ColumnRole, { kind: 'time' }>;

export interface RoleSummary {
  time: [string, TimeRole][];
  targets: string[];
  identifiers: string[];
  historical: string[];
}

/** The columns of each role, in the order the query names them. */
export function summariseRoles(columns: Columns): RoleSummary {
  const out: RoleSummary = { time: [], targets: [], identifiers: [], historical: [] };
  for (const [name, role] of Object.entries(columns)) {
    if (role === 'identifier') out.identifiers.push(name);
    else if (role === 'historical') out.historical.push(name);
    else if (role.kind === 'time') out.time.push([name, role]);
    else out.targets.push(name);
  }
  return out;
}
