/**
 * Toto 2.0 (Datadog, PyPI `toto-2` 2.0.0) on ONNX Runtime: the pre- and post-processing of the
 * reference's GluonTS pipeline (`Toto2GluonTSModel`, default config) and `Toto2Model.forecast`
 * around an exported pass of the network in the scaled space (tools/export/toto.py). Context and
 * the whole horizon share one pass, so the window shrinks as the horizon grows; the 9 levels come
 * back clipped and sorted, the point forecast is level 0.5. Step by step: docs/foundation-models.md,
 * "`toto-2`" and the input/output contracts table.
 */
import { type ForecastOutput, type ForecastTask, type GlobalModel, type ModelSettings } from '../../contract/model-interface.ts';
import { mapQuantileSteps, sortIncreasing } from './quantiles.ts';
import { requireHorizonInRange } from './horizon-range.ts';
import { float32, int64, onnxModel, output, type Runner } from './onnx-session.ts';
import type { Toto2Manifest } from './model-store.ts';

/** The reference scaler's floor on a scale (`PatchedCausalStdScaler.minimum_scale`). */
const MINIMUM_SCALE = 1e-6;
/** The floor of the fallback statistics' scale (`backfill_short_patches`). */
const FALLBACK_MINIMUM_SCALE = 1e-6;
/** Rows per network call (the reference's predictor batches too); forecasts do not depend on it. */
const ROWS_PER_CALL = 256;

const f32 = Math.fround;

/** The window length the reference keeps for a horizon (`Toto2GluonTSModel.instance_splitter`). */
export function windowLength(m: Toto2Manifest, horizon: number): number {
  const p = m.patch_size;
  const context = m.context_length - (Math.ceil(horizon / p) - 1) * p;
  return Math.max(p, Math.floor(context / p) * p);
}

/** One series prepared as `forecast` sees it: values and observed marks over the window and the horizon. */
interface Prepared {
  readonly values: Float32Array;
  readonly observed: Uint8Array;
}

/** Imputation, window cut, padding and the forced last context patch, for one series. */
function prepare(history: Float64Array, window: number, horizonSteps: number, p: number): Prepared {
  const values = new Float32Array(window + horizonSteps);
  const observed = new Uint8Array(window + horizonSteps);
  // ffill_imputation over the whole series: carried value, 0 before the first observation.
  let carried = 0;
  const n = history.length;
  const start = n - window;
  for (let i = 0; i < n; i++) {
    const v = history[i];
    const seen = !Number.isNaN(v);
    if (seen) carried = f32(v);
    const at = i - start;
    if (at < 0) continue;
    values[at] = carried;
    observed[at] = seen ? 1 : 0;
  }
  // _prepare_forecast_inputs: the last context patch counts as observed, padding included.
  observed.fill(1, window - p, window);
  return { values, observed };
}

/** Per-position loc and scale of the causal patch scaler, then the short-history fallback. */
function statistics(x: Float32Array, m: Uint8Array, p: number, minObs: number): { loc: Float32Array; scale: Float32Array } {
  const T = x.length;
  const loc = new Float32Array(T);
  const scale = new Float32Array(T);
  let sum = 0;
  let count = 0;
  let prev = 0;
  let m2 = 0;
  for (let t = 0; t < T; t++) {
    const v = x[t];
    if (m[t]) {
      sum += v;
      count++;
    }
    const mean = sum / Math.max(count, 1);
    if (m[t]) m2 += (v - prev) * (v - mean);
    prev = mean;
    if ((t + 1) % p === 0) {
      const variance = m2 / Math.max(Math.max(count, 1) - 1, 1);
      loc.fill(f32(mean), t + 1 - p, t + 1);
      scale.fill(f32(Math.max(Math.sqrt(variance), MINIMUM_SCALE)), t + 1 - p, t + 1);
    }
  }
  if (minObs <= 0) return { loc, scale };
  // backfill_short_patches: statistics of the first minObs observations (float32 in the reference).
  let n = 0;
  let donorSum = 0;
  for (let t = 0; t < T && n < minObs; t++) {
    if (m[t]) {
      n++;
      donorSum += x[t];
    }
  }
  const donorLoc = f32(donorSum / Math.max(n, 1));
  let sq = 0;
  for (let t = 0, k = 0; t < T && k < n; t++) {
    if (m[t]) {
      k++;
      sq += (x[t] - donorLoc) ** 2;
    }
  }
  const donorScale = f32(Math.max(Math.sqrt(f32(sq / Math.max(n - 1, 1))), FALLBACK_MINIMUM_SCALE));
  let seen = 0;
  for (let start = 0; start < T; start += p) {
    for (let t = start; t < start + p; t++) seen += m[t];
    if (seen >= minObs) break;
    loc.fill(donorLoc, start, start + p);
    scale.fill(donorScale, start, start + p);
  }
  return { loc, scale };
}

/** The reference's forecast of series of one horizon: [series][level][step] at the manifest's levels. */
export async function predictToto2(run: Runner, m: Toto2Manifest, histories: readonly Float64Array[], horizon: number): Promise<Float64Array[][]> {
  requireHorizonInRange('toto-2', m, horizon);
  const p = m.patch_size;
  const Q = m.quantile_levels.length;
  const window = windowLength(m, horizon);
  const ahead = Math.ceil(horizon / p);
  const context = window / p;
  const S = context + ahead;
  const rows = histories.length;
  const patches = new Float32Array(rows * S * p);
  const missing = new Float32Array(rows * S * p);
  const groups = new BigInt64Array(rows * S);
  const stats: { loc: Float32Array; scale: Float32Array; low: number; high: number }[] = [];

  histories.forEach((history, r) => {
    const { values, observed } = prepare(history, window, ahead * p, p);
    const { loc, scale } = statistics(values, observed, p, m.forecast_config.scaler_fallback_min_obs);
    let low = Infinity;
    let high = -Infinity;
    for (let t = 0; t < window; t++) {
      if (!observed[t]) continue;
      low = Math.min(low, values[t]);
      high = Math.max(high, values[t]);
    }
    const widen = f32(m.forecast_config.quantile_real_cap_k * scale[window - 1]);
    stats.push({ loc, scale, low: f32(low - widen), high: f32(high + widen) });
    const base = r * S * p;
    for (let t = 0; t < S * p; t++) {
      if (observed[t]) patches[base + t] = f32(Math.asinh(f32(f32(values[t] - loc[t]) / scale[t])));
      else missing[base + t] = 1;
    }
    for (let s = 0; s < context; s++) {
      let any = 0;
      for (let t = s * p; t < (s + 1) * p; t++) any |= observed[t];
      groups[r * S + s] = any ? 0n : -1n;
    }
  });

  const out = await run({ patches: float32(patches, [rows, S, p]), missing: float32(missing, [rows, S, p]), group_ids: int64(groups, [rows, S]) });
  const q = output(out, 'quantiles', [rows, S, p, Q]);

  // sinh, unscaled by the horizon patch's loc and scale, infinities clamped, clipped to the observed
  // range widened by `quantile_real_cap_k` last-context scales, and the levels sorted.
  return stats.map(({ loc, scale, low, high }, r) => {
    const levels = Array.from({ length: Q }, () => new Float64Array(ahead * p));
    const atStep = new Float64Array(Q);
    for (let j = 0; j < ahead; j++) {
      // The output at patch context - 1 + j predicts horizon patch j.
      const from = (r * S + context - 1 + j) * p * Q;
      const real = Array.from({ length: Q }, (_, k) => {
        const row = new Float64Array(p);
        for (let i = 0; i < p; i++) {
          const t = window + j * p + i;
          row[i] = f32(f32(f32(Math.sinh(q[from + i * Q + k])) * scale[t]) + loc[t]);
        }
        return clampInfinities(row);
      });
      for (let i = 0; i < p; i++) {
        for (let k = 0; k < Q; k++) atStep[k] = Math.min(Math.max(real[k][i], low), high);
        sortIncreasing(atStep);
        for (let k = 0; k < Q; k++) levels[k][j * p + i] = atStep[k];
      }
    }
    return levels.map((l) => l.slice(0, horizon));
  });
}

/** `Toto2Model._clamp_nonfinite` over one patch: +inf to its largest finite value, -inf to its smallest. */
function clampInfinities(row: Float64Array): Float64Array {
  let finite = true;
  for (let i = 0; i < row.length && finite; i++) finite = Number.isFinite(row[i]);
  if (finite) return row;
  let most = -Infinity;
  let least = Infinity;
  for (const v of row) {
    if (Number.isFinite(v)) {
      most = Math.max(most, v);
      least = Math.min(least, v);
    }
  }
  return row.map((v) => (v === Infinity ? most : v === -Infinity ? least : v));
}

/** Forecasts tasks in input order, in batches of one horizon. */
export async function forecastToto2(run: Runner, m: Toto2Manifest, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = new Array(tasks.length);
  const byHorizon = new Map<number, number[]>();
  tasks.forEach((t, i) => byHorizon.set(t.horizon, [...(byHorizon.get(t.horizon) ?? []), i]));
  const median = m.quantile_levels.indexOf(0.5);
  for (const [horizon, indices] of byHorizon) {
    for (let start = 0; start < indices.length; start += ROWS_PER_CALL) {
      const chunk = indices.slice(start, start + ROWS_PER_CALL);
      const forecasts = await predictToto2(
        run,
        m,
        chunk.map((i) => tasks[i].history),
        horizon,
      );
      chunk.forEach((taskIndex, k) => {
        const levels = forecasts[k];
        out[taskIndex] = { mean: levels[median], quantiles: mapQuantileSteps(m.quantile_levels, (j) => levels[j], tasks[taskIndex].quantiles, horizon) };
      });
    }
  }
  return out;
}

/** The service's toto-2 (MODELS_DIR/toto-2). */
export const toto2Model = (settings: ModelSettings): GlobalModel =>
  onnxModel('toto-2', settings, (run, manifest, tasks) => forecastToto2(run, manifest, tasks));
