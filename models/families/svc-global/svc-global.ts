import {
  ModelInputError,
  type ContextSeries,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
} from '../../contract/model-interface.ts';
import { binMatrix } from './binning.ts';
import { DEFAULT_PARAMS, fitGbdt, type GbdtParams } from './gbdt.ts';
import { rng } from '../../numerics/random.ts';
import { predictRow, type Booster } from './trees.ts';
import { buildSchema, centerAt, chooseCenter, fillRow, fitCategoryCodes, seriesScale, type Schema, type SeriesData } from './features.ts';
import { symmetricOffset } from '../../numerics/conformal.ts';
import { sortedQuantile } from '../../numerics/empirical-quantile.ts';
import { groupByCutoff } from './cutoff-groups.ts';
import { constantForecast, isExactlyConstant } from '../../contract/constant-forecast.ts';

/**
 * svc-global: the service's own global model. One gradient-boosted tree ensemble (gbdt.ts) is
 * trained across every series of a request, `only_as_context` ones included, on the rows of
 * features.ts, and forecasts the horizon recursively, feeding its forecasts back as lags. No task
 * sees any series past its own creation time (`groupByCutoff`). Quantiles are calibrated residual
 * quantiles (`fitGroup`). docs/api.md, "`svc-global`"; docs/decisions/042-svc-global-training-limits.md.
 */

export interface SvcGlobalOptions {
  readonly params: GbdtParams;
  /** Most models trained per request (groups of creation dates). */
  readonly maxModels: number;
  /** Training rows per model at most; beyond it rows are sampled uniformly (held-out rows all kept). */
  readonly maxRows: number;
  /** Training rows of the held-out fit at most, sampled uniformly from those kept: it only chooses the rounds and calibrates. */
  readonly maxStoppingRows: number;
  /** Series whose held-out horizon calibrates the quantiles, at most. */
  readonly maxCalibrationSeries: number;
}

export const DEFAULT_OPTIONS: SvcGlobalOptions = {
  // Tuned on M4 Hourly and Weekly (test/bench/accuracy.ts) for accuracy within the time target
  // (BENCHMARKS.md, "`svc-global` against `aets`"); the limits: docs/decisions/042-svc-global-training-limits.md.
  params: { ...DEFAULT_PARAMS, numLeaves: 63, learningRate: 0.12, rounds: 500, minDataInLeaf: 20, featureFraction: 0.6, baggingFraction: 0.5 },
  maxModels: 3,
  maxRows: 300_000,
  maxStoppingRows: 100_000,
  maxCalibrationSeries: 2000,
};

/**
 * What a caller inside the service may ask of one batch (svc-global takes no model_config):
 * `maxModels` lowers the number of models trained. The ensemble forecasts its rolling windows with
 * one model, trained up to the earliest window's cut (members.ts).
 */
export interface SvcGlobalBatch {
  readonly maxModels?: number;
}

/** Number of values of a series known by `cutoff` (times ascending). */
function knownBy(s: SeriesData, cutoff: number): number {
  let lo = 0;
  let hi = s.values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (s.times[mid] <= cutoff) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Recursive forecasts of `horizon` steps after the first `n` values of each series. */
function forecastRecursive(model: Booster, schema: Schema, items: { s: SeriesData; n: number; scale: number }[], horizon: number): Float64Array[] {
  const out = items.map(() => new Float64Array(horizon));
  const ext = items.map(({ s, n }) => {
    const y = new Float64Array(n + horizon);
    y.set(s.values.subarray(0, n));
    return y;
  });
  const row = new Float64Array(schema.width);
  for (let j = 0; j < horizon; j++) {
    items.forEach(({ s, n, scale }, i) => {
      const t = n + j;
      const level = fillRow(schema, row, 0, s, ext[i], t, scale);
      const value = level + scale * predictRow(model, row, 0);
      ext[i][t] = value;
      out[i][j] = value;
    });
  }
  return out;
}

/**
 * Fewer held-out paths (series) than this calibrate symmetric intervals, from the errors' sizes
 * alone. The steps of one path err mostly one way: a trend missed shifts them all. Their signs
 * then say where a few series happened to err, not where the next forecast will; read as
 * quantiles, they gave one series alone an interval beside its mean. An 80% interval's 10% tail
 * is one path in ten (docs/decisions/095-svc-global-symmetric-intervals-from-few-series.md).
 */
export const MIN_SIGNED_CALIBRATION_SERIES = 10;

/**
 * Per horizon step and level, the scaled error quantile. Errors of neighbouring steps are pooled
 * (a window growing with the horizon); with few errors, all steps are pooled after dividing by
 * sqrt(step) and scaled back, the growth of a random walk's spread; with fewer paths than
 * MIN_SIGNED_CALIBRATION_SERIES, their absolute values, symmetric around the mean, each
 * interval's half-width at the finite-sample rank that conformal quantiles use
 * (docs/decisions/007-conformal-quantile-rank.md).
 */
export function errorQuantiles(errors: Float64Array[], horizon: number, levels: readonly number[]): Float64Array[] {
  const perStep = errors.length;
  const out = levels.map(() => new Float64Array(horizon));
  if (perStep === 0) return out;
  const signed = perStep >= MIN_SIGNED_CALIBRATION_SERIES;
  if (!signed || perStep * 3 < 60) {
    // All steps pooled, each divided by sqrt(step): signed errors, or their sizes with too few paths.
    const all = new Float64Array(perStep * horizon);
    let k = 0;
    for (const e of errors) for (let j = 0; j < horizon; j++) all[k++] = (signed ? e[j] : Math.abs(e[j])) / Math.sqrt(j + 1);
    all.sort();
    levels.forEach((q, l) => {
      // From sizes, as conformal intervals read them: 0.9 and 0.1 both read the size at rank 0.8 (N + 1).
      const unit = signed ? sortedQuantile(all, q) : symmetricOffset(all, q);
      for (let j = 0; j < horizon; j++) out[l][j] = unit * Math.sqrt(j + 1);
    });
    return out;
  }
  const w = Math.max(1, Math.round(horizon / 16));
  for (let j = 0; j < horizon; j++) {
    const from = Math.max(0, j - w);
    const to = Math.min(horizon - 1, j + w);
    const pool = new Float64Array(perStep * (to - from + 1));
    let k = 0;
    for (const e of errors) for (let i = from; i <= to; i++) pool[k++] = e[i];
    pool.sort();
    levels.forEach((q, l) => {
      out[l][j] = sortedQuantile(pool, q);
    });
  }
  return out;
}

interface TrainingRow {
  s: SeriesData;
  t: number;
  scale: number;
  holdout: boolean;
}

/**
 * Fits one group's model and its error quantiles. The last `horizon` steps of every series long
 * enough are held out; the model trained without them (boosting stopped early on their one-step
 * error) forecasts them recursively, and the errors, scaled by each series' scale, give per
 * horizon step the empirical quantiles added to the forecast mean (scaled by the forecast series'
 * scale). Then the model is refitted on all rows with the rounds early stopping chose: the held-out
 * horizon is each series' latest data, the most telling for what follows. The held-out fit only
 * chooses the rounds and calibrates, so it trains on a sample of the rows (`maxStoppingRows`)
 * (docs/decisions/085-svc-global-refits-on-every-row.md).
 */
function fitGroup(all: SeriesData[], baseSchema: Schema, cutoff: number, levels: readonly number[], options: SvcGlobalOptions, seed: number) {
  const { m, horizon } = baseSchema;
  const pool = all.map((s) => ({ s, n: knownBy(s, cutoff) })).filter((p) => p.n >= 2);
  if (pool.length === 0) throw new ModelInputError('svc-global needs at least two observations of history');
  // A schema of its own, from this group's data only: its centring, and category codes from its rows.
  const center = chooseCenter(
    pool.map(({ s, n }) => s.values.subarray(0, n)),
    m,
  );
  const schema: Schema = { ...baseSchema, center, variables: baseSchema.variables.map((v) => ({ ...v, codes: new Map() })) };
  const rows: TrainingRow[] = [];
  const calibration: { s: SeriesData; n: number; scale: number }[] = [];
  for (const { s, n } of pool) {
    const scale = seriesScale(s.values, n, m);
    const warm = Math.max(1, Math.min(m, Math.floor(n / 3)));
    // Hold out the last horizon when enough remains to learn from.
    const holdout = n - horizon >= warm + Math.max(2, Math.min(m, 10)) ? n - horizon : n;
    if (holdout < n) calibration.push({ s, n: holdout, scale });
    for (let t = warm; t < n; t++) rows.push({ s, t, scale, holdout: t >= holdout });
  }
  // Sample down to maxRows, always keeping the held-out rows.
  let kept = rows;
  if (rows.length > options.maxRows) {
    const random = rng(seed ^ 0x51ed27);
    const held = rows.filter((r) => r.holdout);
    const rest = rows.filter((r) => !r.holdout);
    const p = Math.max(0, options.maxRows - held.length) / rest.length;
    kept = [...rest.filter(() => random() < p), ...held];
  }
  const targets = new Float64Array(kept.length);
  kept.forEach((r, i) => {
    targets[i] = (r.s.values[r.t] - centerAt(schema, r.s.values, r.t)) / r.scale;
  });
  fitCategoryCodes(schema, kept, targets);
  const values = new Float64Array(kept.length * schema.width);
  kept.forEach((r, i) => fillRow(schema, values, i * schema.width, r.s, r.s.values, r.t, r.scale));
  const data = binMatrix({ rows: kept.length, features: schema.width, values }, options.params.maxBins, seed);
  const trainIdx: number[] = [];
  const validIdx: number[] = [];
  kept.forEach((r, i) => (r.holdout ? validIdx : trainIdx).push(i));
  const minDataInLeaf = Math.min(options.params.minDataInLeaf, Math.max(3, Math.floor(kept.length / 50)));
  const params = { ...options.params, minDataInLeaf, seed };

  let model: Booster;
  let errors: Float64Array[] = [];
  if (validIdx.length > 0 && trainIdx.length > 0) {
    const sample = rng(seed ^ 0x5709);
    const share = options.maxStoppingRows / trainIdx.length;
    const stopping = share >= 1 ? trainIdx : trainIdx.filter(() => sample() < share);
    const fit = fitGbdt(data, targets, Uint32Array.from(stopping), params, Uint32Array.from(validIdx));
    model = fit.booster;
    const random = rng(seed ^ 0xc0ffee);
    const chosen =
      calibration.length <= options.maxCalibrationSeries ? calibration : calibration.filter(() => random() < options.maxCalibrationSeries / calibration.length);
    const forecasts = forecastRecursive(model, schema, chosen, horizon);
    errors = chosen.map(({ s, n, scale }, i) => Float64Array.from(forecasts[i], (f, j) => (s.values[n + j] - f) / scale));
    model = fitGbdt(
      data,
      targets,
      Uint32Array.from(kept, (_, i) => i),
      { ...params, rounds: fit.rounds },
    ).booster;
  } else {
    // Too short to hold anything out: in-sample one-step residuals, widened like a random walk.
    model = fitGbdt(
      data,
      targets,
      Uint32Array.from(kept, (_, i) => i),
      { ...params, rounds: Math.min(params.rounds, 100) },
    ).booster;
    const residuals = Float64Array.from(kept, (r, i) => targets[i] - predictRow(model, values, i * schema.width));
    errors = Array.from(residuals, (e) => Float64Array.from({ length: horizon }, (_, j) => e * Math.sqrt(j + 1)));
  }
  return { model, schema, quantiles: errorQuantiles(errors, horizon, levels) };
}

export function createSvcGlobal(options: SvcGlobalOptions = DEFAULT_OPTIONS): GlobalModel {
  return {
    name: 'svc-global',
    async forecastBatch(tasks: readonly ForecastTask[], context: readonly ContextSeries[], batch: GlobalBatchOptions = {}): Promise<ForecastOutput[]> {
      if (tasks.length === 0) return [];
      const asked = (batch.options as SvcGlobalBatch | undefined)?.maxModels;
      const maxModels = asked !== undefined && asked >= 1 ? Math.min(asked, options.maxModels) : options.maxModels;
      const horizon = tasks[0].horizon;
      const m = Math.max(1, tasks[0].seasonLength);
      const levels = tasks[0].quantiles;
      for (const task of tasks) {
        if (!task.times) throw new Error('svc-global needs the timestamps of every task');
        if (task.horizon !== horizon || task.seasonLength !== tasks[0].seasonLength)
          throw new Error('svc-global needs one horizon and season length per request');
      }
      const asData = (key: number, values: Float64Array, times: Float64Array, cov: ForecastTask['covariates']): SeriesData => ({
        key,
        values,
        times,
        hist: cov?.hist ?? {},
        future: cov?.future ?? {},
        static: cov?.static ?? {},
      });
      // Per series its tasks' histories; the latest creation date's holds what training may use.
      const windows = new Map<number, SeriesData[]>();
      tasks.forEach((task, i) => {
        const key = task.seriesIndex ?? -1 - i;
        const window = asData(key, task.history, task.times!, task.covariates);
        const own = windows.get(key);
        if (own) own.push(window);
        else windows.set(key, [window]);
      });
      const created = (s: SeriesData) => s.times[s.values.length - 1];
      const latestData = new Map([...windows].map(([key, own]) => [key, own.reduce((a, b) => (created(b) > created(a) ? b : a))]));
      const contextData = context.map((c) => asData(c.seriesIndex, c.values, c.times, c.covariates));
      const series: SeriesData[] = [...latestData.values(), ...contextData];
      const schema = buildSchema(series, m, horizon);
      const cutoffs = tasks.map((t) => t.times![t.history.length - 1]);
      const outputs: ForecastOutput[] = new Array(tasks.length);
      groupByCutoff(cutoffs, maxModels).forEach((group, g) => {
        // With a request's context, a task's history is a window that ends at its creation date:
        // a group trained up to an earlier date learns from each series' window that knew most by then.
        const known = [...windows].map(([key, own]) =>
          own.reduce((best, window) => (knownBy(window, group.cutoff) > knownBy(best, group.cutoff) ? window : best), latestData.get(key)!),
        );
        const fitted = fitGroup([...known, ...contextData], schema, group.cutoff, levels, options, options.params.seed + g);
        const items = group.tasks.map((i) => {
          const task = tasks[i];
          const s = asData(task.seriesIndex ?? -1, task.history, task.times!, task.covariates);
          return { s, n: task.history.length, scale: seriesScale(task.history, task.history.length, m) };
        });
        const means = forecastRecursive(fitted.model, fitted.schema, items, horizon);
        group.tasks.forEach((i, k) => {
          const history = tasks[i].history;
          // A constant history's own data show no change, and its scale (its level, for want of
          // differences) would turn the changes the trees learned elsewhere into moves of its whole size.
          if (isExactlyConstant(history)) {
            outputs[i] = constantForecast(history[0], horizon, levels.length);
            return;
          }
          const mean = means[k];
          const scale = items[k].scale;
          outputs[i] = { mean, quantiles: fitted.quantiles.map((q) => Float64Array.from(mean, (v, j) => v + scale * q[j])) };
        });
      });
      return outputs;
    },
  };
}

export const svcGlobal = createSvcGlobal();
