/**
 * TiRex (NX-AI, xLSTM, tirex-ts 1.4.2) on ONNX Runtime: the pre- and post-processing of the
 * reference's `ForecastModel.forecast` and `TiRexZero._forecast_tensor` around an exported single
 * step of the network, scaler and inverse scaling included (tools/export/tirex_zero.py). The
 * roll-out appends NaN patches, not forecasts, so every step of every series goes into the same
 * batched calls. The point forecast is the 0.5 level. Step by step: docs/foundation-models.md,
 * "`tirex`" and "TiRex".
 */
import { ModelInputError, type ForecastOutput, type ForecastTask, type GlobalModel, type ModelSettings } from '../../contract/model-interface.ts';
import { mapQuantileSteps } from './quantiles.ts';
import { float32, onnxModel, output, type Runner } from './onnx-session.ts';
import type { TiRexManifest } from './model-store.ts';

export interface TiRexForecast {
  /** The reference's point forecast: its 0.5 level. */
  readonly median: Float64Array;
  /** [level][step] at the manifest's quantile levels. */
  readonly quantiles: Float64Array[];
}

/**
 * Windows per network call. The reference batches 512 series per call (`forecast`'s batch_size);
 * a window of the released model keeps little activation memory per row, so 256 rows stay well
 * within memory. The forecasts do not depend on it: each window is computed alone.
 */
const ROWS_PER_CALL = 256;

/** Network calls (patches) the reference makes for a horizon: ceil(horizon / patch_size). */
export const rolloutSteps = (m: TiRexManifest, horizon: number): number => Math.ceil(horizon / m.patch_size);

/**
 * The window of roll-out step `step`: the last `context_length` values of the history followed
 * by `step` patches of NaN, NaN-padded on the left when shorter (`_adjust_context_length`).
 */
export function rolloutWindow(m: TiRexManifest, history: Float64Array, step: number, out = new Float32Array(m.context_length)): Float32Array {
  const C = m.context_length;
  const trailing = Math.min(C, step * m.patch_size);
  const kept = Math.min(history.length, C - trailing);
  const front = C - trailing - kept;
  out.fill(NaN, 0, front);
  for (let t = 0; t < kept; t++) out[front + t] = history[history.length - kept + t];
  out.fill(NaN, C - trailing, C);
  return out;
}

/** The reference's forecast of series with their horizons, in input order. */
export async function predictTiRex(run: Runner, m: TiRexManifest, histories: readonly Float64Array[], horizons: readonly number[]): Promise<TiRexForecast[]> {
  if (histories.length !== horizons.length) throw new Error(`${histories.length} histories but ${horizons.length} horizons`);
  const C = m.context_length;
  const P = m.patch_size;
  const Q = m.quantile_levels.length;
  horizons.forEach((h) => {
    if (!(Number.isInteger(h) && h >= 1)) throw new ModelInputError(`horizon ${h} is out of range for tirex: it must be a positive integer`);
  });
  const forecasts = horizons.map((h) => ({ median: new Float64Array(h), quantiles: m.quantile_levels.map(() => new Float64Array(h)) }));
  // Every (series, step) pair is one window; calls take them in order.
  const jobs: { series: number; step: number }[] = [];
  histories.forEach((_, series) => {
    for (let step = 0; step < rolloutSteps(m, horizons[series]); step++) jobs.push({ series, step });
  });
  const median = m.quantile_levels.indexOf(0.5);
  for (let start = 0; start < jobs.length; start += ROWS_PER_CALL) {
    const batch = jobs.slice(start, start + ROWS_PER_CALL);
    const windows = new Float32Array(batch.length * C);
    batch.forEach(({ series, step }, r) => rolloutWindow(m, histories[series], step, windows.subarray(r * C, (r + 1) * C)));
    const out = await run({ window: float32(windows, [batch.length, C]) });
    const quantiles = output(out, 'quantiles', [batch.length, Q, P]);
    batch.forEach(({ series, step }, r) => {
      const f = forecasts[series];
      const first = step * P;
      const count = Math.min(P, f.median.length - first);
      for (let k = 0; k < Q; k++) {
        const base = (r * Q + k) * P;
        for (let t = 0; t < count; t++) f.quantiles[k][first + t] = quantiles[base + t];
      }
    });
  }
  for (const f of forecasts) f.median.set(f.quantiles[median]);
  return forecasts;
}

/** The service's forecast of tasks, in input order: univariate, each task with its own horizon. */
export async function forecastTiRex(run: Runner, m: TiRexManifest, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  for (const task of tasks) {
    const c = task.covariates;
    if (c && Object.keys(c.hist).length + Object.keys(c.future).length + Object.keys(c.static).length > 0) {
      throw new ModelInputError('tirex takes no covariates (the reference forecasts each series from its own history)');
    }
  }
  const forecasts = await predictTiRex(
    run,
    m,
    tasks.map((t) => t.history),
    tasks.map((t) => t.horizon),
  );
  return tasks.map((task, i) => ({
    mean: forecasts[i].median,
    quantiles: mapQuantileSteps(m.quantile_levels, (k) => forecasts[i].quantiles[k], task.quantiles, task.horizon),
  }));
}

/** The service's tirex (MODELS_DIR/tirex). */
export const tirexModel = (settings: ModelSettings): GlobalModel => onnxModel('tirex', settings, (run, manifest, tasks) => forecastTiRex(run, manifest, tasks));
