import type { ModelEntry } from '../../models/contract/model-registry.ts';
import type { ForecastOutput } from '../../models/contract/model-interface.ts';
import type { Engine } from '../engine.ts';
import type { TaskBatch } from '../tasks.ts';
import { computeMetrics } from '../accuracy-metrics.ts';
import type { BacktestSettings, PlannedCutoff, ReconciledExtras } from './backtest.ts';
import { isoTimestamp, stepsBetween, type Duration } from './duration.ts';
import type { ForecastRecord } from './forecast-record.ts';
import { oneStepResiduals } from './one-step-residuals.ts';
import type { PreparedData } from './prepare.ts';
import { historyWindows, reconcileCutoff, type CutoffContext, type SeriesBase } from './reconcile-cutoff.ts';
import type { BetaReconciliation } from './reconciliation-settings.ts';

/**
 * A backtest's reconciliation, cutoff by cutoff over every series forecast at it
 * (reconcile-cutoff.ts): in memory for the synchronous answer, the base forecasts with their
 * one-step residuals when the estimator reads them; and for a job's per-cutoff activity, from
 * the base forecasts its chunks stored.
 */

export interface ReconciledBacktest {
  /** Aligned with the base outputs: the reconciled forecasts, with the answer's quantile levels. */
  readonly outputs: ForecastOutput[];
  readonly extras: ReconciledExtras[];
}

export async function reconcileBacktest(
  engine: Engine,
  model: ModelEntry,
  r: BetaReconciliation,
  settings: BacktestSettings,
  prepared: Pick<PreparedData, 'identifiers' | 'targets' | 'levels'>,
  planned: readonly PlannedCutoff[],
  base: readonly ForecastOutput[],
  lane: TaskBatch['lane'],
): Promise<ReconciledBacktest> {
  const residuals = r.residualWindow === null ? null : await oneStepResiduals(engine, model, settings, planned, prepared, r.residualWindow, lane);
  const targetCount = prepared.targets.length;
  const byCutoff = new Map<number, number[]>();
  planned.forEach((p, i) => (byCutoff.get(p.cutoff) ?? byCutoff.set(p.cutoff, []).get(p.cutoff)!).push(i));

  const outputs: ForecastOutput[] = new Array(base.length);
  const extras: ReconciledExtras[] = new Array(base.length);
  const expectedLevels = prepared.levels.map((level) => level.kept);
  for (const [cutoff, group] of byCutoff) {
    const windows = r.readsHistory
      ? prepared.targets.map((_, t) =>
          historyWindows(
            group.map((i) => ({ start: planned[i].series.start, values: planned[i].series.targets[t].subarray(0, planned[i].seen) })),
            cutoff,
            settings.freq,
            settings.context,
          ),
        )
      : null;
    const items: SeriesBase[] = group.map((i, k) => ({
      ids: planned[i].series.ids,
      targets: prepared.targets.map((_, t) => ({
        mean: base[i * targetCount + t].mean,
        quantiles: base[i * targetCount + t].quantiles,
        ...(windows && { history: windows[t][k] }),
        ...(residuals && { residuals: residuals[i * targetCount + t] }),
      })),
    }));
    const context = { identifiers: prepared.identifiers, targets: prepared.targets, levels: settings.levels, expectedLevels, cutoffText: isoTimestamp(cutoff) };
    reconcileCutoff(r, context, items).forEach((reconciled, k) => {
      reconciled.targets.forEach((output, t) => {
        const at = group[k] * targetCount + t;
        outputs[at] = output;
        extras[at] = { level: reconciled.level, baseMean: base[at].mean };
      });
    });
  }
  return { outputs, extras };
}

/** A base forecast as a reconciling job's chunk stored it (store/beta-base-forecasts.ts). */
export interface StoredBase {
  readonly ids: readonly (string | null)[];
  readonly target: number;
  readonly refitted: boolean;
  readonly mean: Float64Array;
  /** One array per level of `BetaReconciliation.taskLevels`. */
  readonly quantiles: readonly Float64Array[];
  readonly actuals: Float64Array;
  readonly residuals: Float64Array | null;
}

/** A series' observed values, per target, from its first step; read for historical proportions. */
export interface StoredSeries {
  readonly start: number;
  readonly targets: readonly Float64Array[];
}

/** A key for a series' identifier values (null included). */
export const seriesKey = (ids: readonly (string | null)[]): string => JSON.stringify(ids);

/**
 * One cutoff of a job: its stored base forecasts reconciled and scored, as records of its
 * results part. `series` (by `seriesKey`) holds their values when the method reads the history.
 */
export function reconcileStoredCutoff(
  r: BetaReconciliation,
  context: Omit<CutoffContext, 'cutoffText'> & { cutoff: number; freq: Duration; context: number | null },
  stored: readonly StoredBase[],
  series: ReadonlyMap<string, StoredSeries> | null,
): ForecastRecord[] {
  const targetCount = context.targets.length;
  const bySeries = new Map<string, StoredBase[]>();
  for (const s of stored) {
    const key = seriesKey(s.ids);
    (bySeries.get(key) ?? bySeries.set(key, new Array(targetCount)).get(key)!)[s.target] = s;
  }
  const groups = [...bySeries.values()];
  const windows =
    r.readsHistory && series
      ? context.targets.map((_, t) =>
          historyWindows(
            groups.map((g) => {
              const own = series.get(seriesKey(g[0].ids))!;
              return { start: own.start, values: own.targets[t].subarray(0, stepsBetween(own.start, context.cutoff, context.freq) + 1) };
            }),
            context.cutoff,
            context.freq,
            context.context,
          ),
        )
      : null;
  const items: SeriesBase[] = groups.map((g, k) => ({
    ids: g[0].ids,
    targets: g.map((b, t) => ({
      mean: b.mean,
      quantiles: b.quantiles,
      ...(windows && { history: windows[t][k] }),
      ...(b.residuals && { residuals: b.residuals }),
    })),
  }));
  const reconciled = reconcileCutoff(r, { ...context, cutoffText: isoTimestamp(context.cutoff) }, items);
  return groups.flatMap((g, k) =>
    g.map((b, t): ForecastRecord => {
      const { mean, quantiles } = reconciled[k].targets[t];
      const known = b.actuals.length;
      const metrics =
        known > 0
          ? computeMetrics(
              b.actuals,
              mean.subarray(0, known),
              context.levels,
              quantiles.map((q) => q.subarray(0, known)),
            )
          : null;
      const extras = { level: reconciled[k].level, baseMean: b.mean };
      return { ids: b.ids, cutoff: context.cutoff, refitted: b.refitted, target: t, mean, quantiles, actuals: b.actuals, metrics, reconciled: extras };
    }),
  );
}
