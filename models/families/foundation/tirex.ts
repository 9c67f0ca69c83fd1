/**
 * TiRex (NX-AI, xLSTM) on ONNX Runtime: the pre- and post-processing of the reference's
 * `ForecastModel.forecast` and `TiRexZero._forecast_tensor` (tirex-ts 1.4.2, defaults:
 * `max_accelerated_rollout_steps` 1, no resampling) around an exported single step of the
 * network (tools/export/tirex_zero.py), which holds the reference's scaler, the sLSTM blocks with
 * their bfloat16 recurrence, the quantile head and the inverse scaling.
 *
 * One network call forecasts the `patch_size` steps after a window of exactly `context_length`
 * values: the reference cuts a longer context to its last `context_length` values and pads a
 * shorter one on the left with NaN (`_adjust_context_length`); NaN, padding or missing, is the
 * model's own "not observed" input (a zero value with a zero mask), so missing values need no
 * imputation. Past one patch the reference rolls out by appending a patch of NaN to the context,
 * not its forecast, and forecasting again: the window of step k is the history followed by k
 * patches of NaN, cut to `context_length`. The steps therefore do not depend on one another and
 * every step of every series goes into the same batched calls. Once the horizon reaches past a
 * whole window of NaN (horizon > context_length) the window holds no observation and the
 * reference's scaler falls back to location 0 and scale 1: the service returns what the
 * reference returns there, too.
 *
 * The point forecast is the 0.5 level, as the reference's `_forecast_quantiles` returns it ("median
 * as mean"); requested levels between the model's are interpolated (quantiles.ts).
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
 * a window of the released model (2048 values, 64 patches through 12 sLSTM blocks of 512) keeps
 * a few hundred kB of activations per row, so 256 rows stay well within memory. The forecasts do
 * not depend on it: each window is computed alone.
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
