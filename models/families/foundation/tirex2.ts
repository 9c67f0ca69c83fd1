/**
 * TiRex-2 (NX-AI, tirex-2 0.4.0) on ONNX Runtime: the pre- and post-processing of the reference's
 * `ForecastModel.forecast` -> `TiRex2.predict` around the exported network (tools/export/tirex2_export.py)
 * on rows of exactly `context_length + future_length` values. Each series is one group of rows
 * (target, past-only, then known-future covariates); trends, differencing and band calibration are
 * tirex2-post.ts. A horizon above `future_length` is refused (the reference cuts it). Step by step:
 * docs/foundation-models.md, "`tirex-2`" and "TiRex-2".
 */
import {
  ModelInputError,
  type CovariateValue,
  type ForecastOutput,
  type ForecastTask,
  type GlobalModel,
  type ModelSettings,
} from '../../contract/model-interface.ts';
import { requireHorizonInRange } from './horizon-range.ts';
import { mapQuantileSteps } from './quantiles.ts';
import { bool, float32, onnxModel, output, type Runner } from './onnx-session.ts';
import type { Tirex2Manifest } from './model-store.ts';
import { differenced, isTrending, lastObserved, postprocess } from './tirex2-post.ts';

/** One series as the reference's `TimeseriesType` with a univariate target. */
export interface Tirex2Series {
  readonly target: Float64Array;
  /** Past-only covariates, each as long as the target (`past_covariates`). */
  readonly past?: readonly Float64Array[];
  /** Known-future covariates, each the target's length plus the horizon (`future_covariates`). */
  readonly future?: readonly Float64Array[];
}

export interface Tirex2Forecast {
  /** The point forecast: the 0.5 level. */
  readonly median: Float64Array;
  /** [level][step] at the manifest's quantile levels. */
  readonly quantiles: Float64Array[];
}

/**
 * Rows per network call, whole series only. The attention of a call spans all its rows (masked
 * to each group), so its cost grows with the square of the rows; the forecasts do not depend on
 * how series are split into calls.
 */
const ROWS_PER_CALL = 128;

/** `sign * v` for every value, in float32 (a plain loop: `Float32Array.from` with a mapping walks an iterator). */
function signedFloat32(values: Float64Array, sign: number): Float32Array {
  const out = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = sign * values[i];
  return out;
}

/** A series' rows: the target (raw or differenced) and its covariates, each a window of the network's width. */
function seriesRows(m: Tirex2Manifest, s: Tirex2Series, target: Float32Array, horizon: number, sign: number, trending: boolean): Float32Array[] {
  const C = m.context_length;
  const W = C + m.future_length;
  const row = (values: ArrayLike<number>, observed: number): Float32Array => {
    // The last C of the history, left-padded with NaN, then the values given past it (the horizon).
    const out = new Float32Array(W).fill(NaN);
    const n = s.target.length;
    const kept = Math.min(n, C);
    for (let t = 0; t < kept; t++) out[C - kept + t] = values[n - kept + t];
    for (let t = n; t < observed; t++) out[C + t - n] = values[t];
    return out;
  };
  const n = s.target.length;
  const signed = (v: Float64Array) => signedFloat32(v, sign);
  return [
    row(trending ? differenced(target) : target, n),
    ...(s.past ?? []).map((p) => row(signed(p), n)),
    ...(s.future ?? []).map((f) => row(signed(f), n + horizon)),
  ];
}

/** One pass of `TiRex2._predict` over series (signs +1, or -1 for the sign-flipped pass). */
async function predictPass(
  run: Runner,
  m: Tirex2Manifest,
  series: readonly Tirex2Series[],
  horizons: readonly number[],
  sign: number,
): Promise<Float64Array[][]> {
  const c = m.forecast_config;
  const W = m.context_length + m.future_length;
  const F = m.future_length;
  const Q = m.quantile_levels.length;
  const prepared = series.map((s, i) => {
    const target = signedFloat32(s.target, sign);
    const trending = c.tta_diff && isTrending(target, c);
    return { trending, last: lastObserved(target), rows: seriesRows(m, s, target, horizons[i], sign, trending) };
  });
  const out: Float64Array[][] = new Array(series.length);
  for (let start = 0; start < series.length;) {
    let end = start;
    let rows = 0;
    while (end < series.length && (end === start || rows + prepared[end].rows.length <= ROWS_PER_CALL)) rows += prepared[end++].rows.length;
    const x = new Float32Array(rows * W);
    const group = new Float32Array(rows);
    const targetMask = new Uint8Array(rows);
    const targetRow: number[] = [];
    let r = 0;
    for (let i = start; i < end; i++) {
      targetRow.push(r);
      prepared[i].rows.forEach((values, k) => {
        x.set(values, r * W);
        group[r] = i - start + 1;
        targetMask[r] = k === 0 ? 1 : 0;
        r++;
      });
    }
    const result = await run({ x: float32(x, [rows, W]), group: float32(group, [rows]), target_mask: bool(targetMask, [rows]) });
    const quantiles = output(result, 'quantiles', [rows, Q, F]);
    for (let i = start; i < end; i++) {
      const base = targetRow[i - start] * Q * F;
      const levels = m.quantile_levels.map((_, k) => Float64Array.from(quantiles.subarray(base + k * F, base + k * F + horizons[i])));
      postprocess(levels, prepared[i].trending, prepared[i].last, c);
      out[i] = levels;
    }
    start = end;
  }
  return out;
}

/** The reference's forecast of series with their horizons, in input order. */
export async function predictTirex2(run: Runner, m: Tirex2Manifest, series: readonly Tirex2Series[], horizons: readonly number[]): Promise<Tirex2Forecast[]> {
  if (series.length !== horizons.length) throw new Error(`${series.length} series but ${horizons.length} horizons`);
  horizons.forEach((h, i) => {
    requireHorizonInRange('tirex-2', m, h);
    const s = series[i];
    if (s.target.length === 0) throw new ModelInputError('tirex-2 needs at least one value of history');
    for (const p of s.past ?? [])
      if (p.length !== s.target.length) throw new ModelInputError(`a past covariate has ${p.length} values, the history ${s.target.length}`);
    for (const f of s.future ?? [])
      if (f.length !== s.target.length + h)
        throw new ModelInputError(`a future covariate has ${f.length} values, the history and horizon ${s.target.length + h}`);
  });
  const first = await predictPass(run, m, series, horizons, 1);
  if (m.forecast_config.tta_sign_flip) {
    // `TiRex2.predict`: the flipped forecast negated, level q read at its complement 1 - q, averaged.
    const flipped = await predictPass(run, m, series, horizons, -1);
    const levels = m.quantile_levels;
    const complement = levels.map((q) => levels.findIndex((p) => Math.abs(p - (1 - q)) <= 1e-6));
    first.forEach((f, i) => {
      const averaged = f.map((q, k) => q.map((v, t) => (v + -flipped[i][complement[k]][t]) / 2));
      averaged.forEach((q, k) => f[k].set(q));
    });
  }
  const median = m.quantile_levels.indexOf(0.5);
  return first.map((quantiles) => ({ median: quantiles[median].slice(), quantiles }));
}

const numeric = (values: readonly CovariateValue[], name: string): Float64Array =>
  Float64Array.from(values, (v) => {
    if (typeof v !== 'number') throw new ModelInputError(`tirex-2 takes numeric covariates only; '${name}' holds ${JSON.stringify(v)}`);
    return v;
  });

/** A task as the reference's series: covariates in name order (the fixture's order too). */
export function tirex2Series(task: ForecastTask): Tirex2Series {
  const c = task.covariates;
  if (c && Object.keys(c.static).length > 0)
    throw new ModelInputError('tirex-2 takes no static covariates (the reference has past-only and known-future ones)');
  const sorted = (r: Readonly<Record<string, readonly CovariateValue[]>>) =>
    Object.keys(r)
      .sort()
      .map((k) => numeric(r[k], k));
  return { target: task.history, past: c ? sorted(c.hist) : [], future: c ? sorted(c.future) : [] };
}

/** The service's forecast of tasks, in input order; each series with its own covariates and horizon. */
export async function forecastTirex2(run: Runner, m: Tirex2Manifest, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  const forecasts = await predictTirex2(
    run,
    m,
    tasks.map(tirex2Series),
    tasks.map((t) => t.horizon),
  );
  return tasks.map((task, i) => ({
    mean: forecasts[i].median,
    quantiles: mapQuantileSteps(m.quantile_levels, (k) => forecasts[i].quantiles[k], task.quantiles, task.horizon),
  }));
}

/** The service's tirex-2 (MODELS_DIR/tirex-2). */
export const tirex2Model = (settings: ModelSettings): GlobalModel =>
  onnxModel('tirex-2', settings, (run, manifest, tasks) => forecastTirex2(run, manifest, tasks));
