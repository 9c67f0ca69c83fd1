/**
 * Reverso (the paper's reference code, github.com/shinfxh/reverso at 6904526) on ONNX Runtime: the
 * pre- and post-processing of its forecasting pipeline, `ReversoPredictor.predict` of
 * example/eval_gift.py, around an exported `Model.forward`, min-max normalisation included
 * (tools/export/reverso_export.py): downsampling, the padded and interpolated window, the
 * autoregressive roll-out, optional flip invariance. The forecast is a point: the mean and every
 * quantile equal it. Step by step: docs/foundation-models.md, "`reverso`" and "Reverso".
 */
import { ModelInputError, type ForecastOutput, type ForecastTask, type GlobalModel, type ModelSettings } from '../../contract/model-interface.ts';
import { requireHorizonInRange } from './horizon-range.ts';
import { float32, onnxModel, output, type Runner } from './onnx-session.ts';
import type { ReversoManifest } from './model-store.ts';

/** Rows per network call (the reference's predictor batches 256 series); forecasts do not depend on it. */
const ROWS_PER_CALL = 256;

const f32 = Math.fround;

/**
 * numpy's `np.interp(x, xp, fp)` (numpy's arr_interp) in float64: fp[0] left of xp[0], fp[-1]
 * from xp[-1] on, the value itself at a sample point, else slope * (x - xp[j]) + fp[j].
 */
export function interp(x: ArrayLike<number>, xp: ArrayLike<number>, fp: ArrayLike<number>): Float64Array {
  const n = xp.length;
  const out = new Float64Array(x.length);
  let j = 0;
  for (let i = 0; i < x.length; i++) {
    const v = x[i];
    if (v < xp[0]) out[i] = fp[0];
    else if (v >= xp[n - 1]) out[i] = fp[n - 1];
    else {
      if (!(xp[j] <= v && v < xp[j + 1])) {
        let lo = 0;
        let hi = n - 1;
        while (hi - lo > 1) {
          const mid = (lo + hi) >> 1;
          if (xp[mid] <= v) lo = mid;
          else hi = mid;
        }
        j = lo;
      }
      if (xp[j] === v) out[i] = fp[j];
      else {
        const slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
        out[i] = slope * (v - xp[j]) + fp[j];
      }
    }
  }
  return out;
}

/** numpy's `np.linspace(0, 1, n)`: i * (1 / (n - 1)), the last exactly 1; [0] for n = 1. */
export function unitLinspace(n: number): Float64Array {
  const out = new Float64Array(n);
  if (n === 1) return out;
  const step = 1 / (n - 1);
  for (let i = 0; i < n; i++) out[i] = i * step;
  out[n - 1] = 1;
  return out;
}

/** One series' window as `_prepare_context_matrix` makes it: [context_length] float32, no NaN. */
export function prepareWindow(history: Float64Array, length: number, downsampleFactor: number): Float32Array {
  const values = Float32Array.from({ length: Math.ceil(history.length / downsampleFactor) }, (_, i) => history[i * downsampleFactor]);
  const kept = values.subarray(Math.max(0, values.length - length));
  const window = new Float32Array(length).fill(kept.length > 0 ? kept[0] : 0);
  window.set(kept, length - kept.length);
  const observed: number[] = [];
  for (let t = 0; t < length; t++) if (!Number.isNaN(window[t])) observed.push(t);
  if (observed.length === length) return window;
  if (observed.length >= 2) {
    const filled = interp(
      Float64Array.from({ length }, (_, t) => t),
      observed,
      observed.map((t) => window[t]),
    );
    return Float32Array.from(filled, f32);
  }
  // Forward fill, then backward fill, then zeros: one observed value fills everything.
  return window.fill(observed.length === 1 ? window[observed[0]] : 0);
}

/** The network rolled out over windows: `steps` forecasts of output_patch_size each, per row. */
async function rollOut(run: Runner, m: ReversoManifest, windows: readonly Float32Array[], steps: number): Promise<Float32Array[]> {
  const L = m.context_length;
  const P = m.output_patch_size;
  const out: Float32Array[] = [];
  for (let start = 0; start < windows.length; start += ROWS_PER_CALL) {
    const rows = windows.slice(start, start + ROWS_PER_CALL);
    // Each row's context grows by the forecasts; the network reads its last L values.
    const context = rows.map((w) => {
      const c = new Float32Array(L + steps * P);
      c.set(w);
      return c;
    });
    for (let s = 0; s < steps; s++) {
      const input = new Float32Array(rows.length * L);
      context.forEach((c, r) => input.set(c.subarray(s * P, s * P + L), r * L));
      const result = await run({ context: float32(input, [rows.length, L]) });
      const forecast = output(result, 'forecast', [rows.length, P]);
      context.forEach((c, r) => c.set(forecast.subarray(r * P, (r + 1) * P), L + s * P));
    }
    out.push(...context.map((c) => c.slice(L)));
  }
  return out;
}

/** The reference's point forecasts of series of one horizon, in input order. */
export async function predictReverso(run: Runner, m: ReversoManifest, histories: readonly Float64Array[], horizon: number): Promise<Float64Array[]> {
  requireHorizonInRange('reverso', m, horizon);
  const { flip_invariance: flip, downsample_factor: k } = m.forecast_config;
  const target = Math.floor(horizon / k);
  const steps = Math.ceil(target / m.output_patch_size);
  const windows = histories.map((h) => prepareWindow(h, m.context_length, k));
  const positive = await rollOut(run, m, windows, steps);
  const negative = flip
    ? await rollOut(
        run,
        m,
        windows.map((w) => w.map((v) => -v)),
        steps,
      )
    : [];
  return positive.map((pos, i) => {
    const point = new Float32Array(target);
    for (let t = 0; t < target; t++) point[t] = flip ? f32(pos[t] - negative[i][t]) * 0.5 : pos[t];
    // The reference forward-fills a NaN forecast step (numpy_fill); a finite graph makes none.
    for (let t = 1; t < target; t++) if (Number.isNaN(point[t])) point[t] = point[t - 1];
    return k > 1 ? interp(unitLinspace(horizon), unitLinspace(target), point) : Float64Array.from(point);
  });
}

/** The service's forecast of tasks, in input order: univariate, one batch per horizon. */
export async function forecastReverso(run: Runner, m: ReversoManifest, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  const byHorizon = new Map<number, number[]>();
  tasks.forEach((task, i) => {
    const c = task.covariates;
    if (c && Object.keys(c.hist).length + Object.keys(c.future).length + Object.keys(c.static).length > 0) {
      throw new ModelInputError('reverso takes no covariates (the reference forecasts each series from its own history)');
    }
    byHorizon.set(task.horizon, [...(byHorizon.get(task.horizon) ?? []), i]);
  });
  const out: ForecastOutput[] = new Array(tasks.length);
  for (const [horizon, indices] of byHorizon) {
    const forecasts = await predictReverso(
      run,
      m,
      indices.map((i) => tasks[i].history),
      horizon,
    );
    indices.forEach((taskIndex, j) => {
      const point = forecasts[j];
      out[taskIndex] = { mean: point, quantiles: tasks[taskIndex].quantiles.map(() => Float64Array.from(point)) };
    });
  }
  return out;
}

/** The service's reverso (MODELS_DIR/reverso). */
export const reversoModel = (settings: ModelSettings): GlobalModel =>
  onnxModel('reverso', settings, (run, manifest, tasks) => forecastReverso(run, manifest, tasks));
