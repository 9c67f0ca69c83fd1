import { z } from 'zod';
import { quantileKey } from '../quantile-key.ts';
import type { Metrics } from '../response-schema.ts';
import type { BacktestSettings, TargetForecast } from './backtest.ts';
import { addDuration, isoDuration, isoTimestamp } from './duration.ts';
import type { PreparedData } from './prepare.ts';

/**
 * The beta response (reference 2.9), column-oriented: every array of `data` has one entry per
 * row, a row being one (series, cutoff, step). Two additions, both aligned the same way:
 * `targets.<name>.actual` (the prepared true value where the data has it, else null) and
 * `metrics`, one entry per (series, cutoff) with known actuals, scored like the stable API. A
 * reconciled answer adds `level` to both, and `targets.<name>.base_mean`, the unreconciled mean.
 */

const Identifiers = z
  .record(z.string(), z.array(z.string().nullable()))
  .meta({ description: "One array per identifier column kept by at least one forecast level; null where the row's level aggregates it away." });

const Level = z.array(z.string()).meta({
  description: "Present when the query reconciles: the row's level, named by the identifiers it keeps in the query's order, joined by `/`.",
});

const MetricArrays = z.object({
  mae: z.array(z.number().nullable()),
  mape: z.array(z.number().nullable()),
  crps: z.array(z.number().nullable()),
  wape: z.array(z.number().nullable()),
  scaled_bias: z.array(z.number().nullable()),
});

export const BetaResponse = z
  .object({
    data: z.object({
      time: z.array(z.string()).meta({ description: 'Start of the forecast step, ISO 8601 UTC.' }),
      cutoff: z.array(z.string()).meta({ description: 'Forecast origin: the last step the forecast saw, ISO 8601 UTC.' }),
      lead_time: z.array(z.string()).meta({ description: 'time - cutoff, ISO 8601 duration (P1D, PT1H, P1M).' }),
      span: z.array(z.string()).meta({ description: 'What one row covers: one frequency step, ISO 8601 duration.' }),
      refitted: z.array(z.boolean()).optional().meta({
        description: 'Present when the query gives a refit policy other than `every`: false where the model kept the fit of an earlier cutoff.',
      }),
      level: Level.optional(),
      identifiers: Identifiers,
      targets: z.record(
        z.string(),
        z.object({
          quantiles: z.record(z.string(), z.array(z.number())).meta({ description: '`mean` and one key per requested quantile ("0.1").' }),
          actual: z.array(z.number().nullable()).meta({ description: 'The true (prepared) value where the data has it; null past its end.' }),
          base_mean: z
            .array(z.number())
            .optional()
            .meta({ description: 'Present when the query reconciles: the base (unreconciled, not coherent) mean, beside the reconciled `mean`.' }),
        }),
      ),
    }),
    metrics: z
      .object({
        cutoff: z.array(z.string()),
        level: Level.optional(),
        identifiers: Identifiers,
        known_steps: z.array(z.int()),
        targets: z.record(z.string(), MetricArrays),
      })
      .nullable()
      .meta({
        description:
          'One entry per (series, cutoff) whose forecast has known actuals; null when none has. Formulas as in the stable API (docs/operations.md, "Metrics").',
      }),
  })
  .meta({ id: 'BetaResponse' });

export type BetaResponse = z.output<typeof BetaResponse>;

/** Appends rows column by column, so a large answer never holds a row object per step. */
export class BetaResponseBuilder {
  readonly body: BetaResponse;
  private readonly metricsBody: NonNullable<BetaResponse['metrics']>;

  constructor(
    private readonly identifiers: string[],
    targets: string[],
    private readonly quantileKeys: string[],
    reconciled = false,
  ) {
    const ids = () => Object.fromEntries(identifiers.map((name) => [name, [] as (string | null)[]]));
    const level = () => (reconciled ? { level: [] as string[] } : {});
    this.body = {
      data: {
        time: [],
        cutoff: [],
        lead_time: [],
        span: [],
        ...level(),
        identifiers: ids(),
        targets: Object.fromEntries(
          targets.map((t) => [
            t,
            {
              quantiles: Object.fromEntries(['mean', ...quantileKeys].map((k) => [k, [] as number[]])),
              actual: [] as (number | null)[],
              ...(reconciled && { base_mean: [] as number[] }),
            },
          ]),
        ),
      },
      metrics: null,
    };
    this.metricsBody = {
      cutoff: [],
      ...level(),
      identifiers: ids(),
      known_steps: [],
      targets: Object.fromEntries(targets.map((t) => [t, { mae: [], mape: [], crps: [], wape: [], scaled_bias: [] }])),
    };
  }

  addRow(ids: Record<string, string | null>, time: string, cutoff: string, leadTime: string, span: string, refitted?: boolean, level?: string): void {
    const d = this.body.data;
    if (refitted !== undefined) (d.refitted ??= []).push(refitted);
    if (level !== undefined) d.level!.push(level);
    d.time.push(time);
    d.cutoff.push(cutoff);
    d.lead_time.push(leadTime);
    d.span.push(span);
    for (const name of this.identifiers) d.identifiers[name].push(ids[name] ?? null);
  }

  addPrediction(target: string, mean: number, quantiles: ArrayLike<number>, actual: number | null, baseMean?: number): void {
    const t = this.body.data.targets[target];
    t.quantiles.mean.push(mean);
    if (baseMean !== undefined) t.base_mean!.push(baseMean);
    this.quantileKeys.forEach((key, k) => t.quantiles[key].push(quantiles[k]));
    t.actual.push(actual);
  }

  addMetrics(ids: Record<string, string | null>, cutoff: string, knownSteps: number, byTarget: Record<string, Metrics>, level?: string): void {
    const m = this.metricsBody;
    m.cutoff.push(cutoff);
    if (level !== undefined) m.level!.push(level);
    m.known_steps.push(knownSteps);
    for (const name of this.identifiers) m.identifiers[name].push(ids[name] ?? null);
    for (const [target, metrics] of Object.entries(byTarget)) {
      for (const key of ['mae', 'mape', 'crps', 'wape', 'scaled_bias'] as const) m.targets[target][key].push(metrics[key]);
    }
    this.body.metrics = m;
  }
}

/** The answer to a synchronous query: one row per (series, cutoff, step), in the backtest's order; `reconciled` adds levels and base means. */
export function betaResponse(
  prepared: Pick<PreparedData, 'identifiers' | 'levels' | 'targets'>,
  settings: BacktestSettings,
  forecasts: Iterable<TargetForecast>,
  reconciled = false,
): BetaResponse {
  const keptIdentifiers = prepared.identifiers.filter((name) => prepared.levels.some((l) => l.kept.includes(name)));
  const builder = new BetaResponseBuilder(keptIdentifiers, prepared.targets, settings.levels.map(quantileKey), reconciled);
  const { freq, horizon } = settings;
  const spanText = isoDuration(freq);
  let metrics: Record<string, Metrics> = {};
  for (const { planned: p, target, output, actuals, metrics: scored, reconciled: extras } of forecasts) {
    const ids = Object.fromEntries(prepared.identifiers.map((name, j) => [name, p.series.ids[j]]));
    const cutoffText = isoTimestamp(p.cutoff);
    if (target === 0) {
      const refitted = settings.reportRefitted ? p.fittedAt === p.seen : undefined;
      for (let h = 1; h <= horizon; h++)
        builder.addRow(ids, isoTimestamp(addDuration(p.cutoff, freq, h)), cutoffText, isoDuration(freq, h), spanText, refitted, extras?.level);
      metrics = {};
    }
    const name = prepared.targets[target];
    for (let h = 0; h < horizon; h++)
      builder.addPrediction(
        name,
        output.mean[h],
        output.quantiles.map((q) => q[h]),
        h < actuals.length ? actuals[h] : null,
        extras?.baseMean[h],
      );
    if (scored) metrics[name] = scored;
    if (target === prepared.targets.length - 1 && actuals.length > 0) builder.addMetrics(ids, cutoffText, actuals.length, metrics, extras?.level);
  }
  return builder.body;
}
