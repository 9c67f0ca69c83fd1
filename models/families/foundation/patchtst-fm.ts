/**
 * PatchTST-FM (IBM granite-tsfm 0.3.11) on ONNX Runtime: the pre- and post-processing of the
 * reference's `PatchTSTFMForPrediction.forward` with a list of series around an exported pass of
 * the network, RevIN included (tools/export/patchtst_fm.py). It forecasts by reconstruction: one
 * window holds the history's last values and masked forecast slots; a horizon of `context_length`
 * or more is refused, as the reference cannot forecast it. The point forecast is the reference's
 * mean. Step by step: docs/foundation-models.md, "`patchtst-fm`" and "PatchTST-FM".
 */
import { ModelInputError, type ForecastOutput, type ForecastTask, type GlobalModel, type ModelSettings } from '../../contract/model-interface.ts';
import { mapQuantileSteps } from './quantiles.ts';
import { requireHorizonInRange } from './horizon-range.ts';
import { bool, float32, onnxModel, output, type Runner } from './onnx-session.ts';
import type { PatchTSTFMManifest } from './model-store.ts';

export interface PatchTSTFMForecast {
  /** The reference's point forecast (`prediction_outputs`): the mean of the quantile function. */
  readonly mean: Float64Array;
  /** [level][step] at the manifest's quantile levels. */
  readonly quantiles: Float64Array[];
}

/**
 * Rows x patches per network call: attention costs patches squared per row, the rest linearly;
 * this keeps a call of the released model (512 patches of 16 steps, d_model 1024) within a few
 * hundred MB. The forecasts do not depend on it.
 */
const PATCHES_PER_CALL = 8192;

/** The slots one pass reconstructs for a horizon (the reference's `fl`). */
export const forecastSlots = (m: PatchTSTFMManifest, horizon: number): number => Math.max(horizon, m.min_forecast_length);

interface Row {
  /** The history kept in the window: its last context_length - slots values. */
  readonly kept: Float64Array;
  /** Patches from the first one holding a history value to the end of the window. */
  readonly patches: number;
}

function windowRow(m: PatchTSTFMManifest, history: Float64Array, slots: number): Row {
  const kept = history.subarray(Math.max(0, history.length - (m.context_length - slots)));
  if (!kept.some((v) => !Number.isNaN(v))) {
    const where = kept.length === history.length ? 'its history' : `the last ${kept.length} values of its history (what the window holds with this horizon)`;
    throw new ModelInputError(`patchtst-fm needs at least one observed value in ${where}; got none`);
  }
  return { kept, patches: Math.ceil((kept.length + slots) / m.patch_size) };
}

/** The reference's `prediction_outputs` at one step: trapezoids over the levels plus the tails. */
export function quantileMean(levels: readonly number[], values: ArrayLike<number>): number {
  const n = levels.length;
  let sum = values[0] * levels[0] + values[n - 1] * (1 - levels[n - 1]);
  for (let k = 0; k + 1 < n; k++) sum += ((levels[k + 1] - levels[k]) * (values[k] + values[k + 1])) / 2;
  return sum;
}

/** One network call on rows of equal slots: the trailing `patches` patches of their windows. */
async function runWindows(
  run: Runner,
  m: PatchTSTFMManifest,
  rows: readonly Row[],
  patches: number,
  slots: number,
  horizon: number,
): Promise<PatchTSTFMForecast[]> {
  const d = m.patch_size;
  const width = patches * d;
  const Q = m.quantile_levels.length;
  const values = new Float32Array(rows.length * width);
  const masked = new Uint8Array(rows.length * width);
  const padding = new Uint8Array(rows.length * width);
  rows.forEach(({ kept }, r) => {
    const base = r * width;
    const front = width - kept.length - slots;
    padding.fill(1, base, base + front);
    masked.fill(1, base, base + front);
    for (let t = 0; t < kept.length; t++) {
      const v = kept[t];
      if (Number.isNaN(v)) masked[base + front + t] = 1;
      else values[base + front + t] = v;
    }
    masked.fill(1, base + width - slots, base + width);
  });
  const dims = [rows.length, patches, d];
  const out = await run({
    values: float32(values, dims),
    masked: bool(masked, dims),
    padding: bool(padding, dims),
    forecast_slots: float32(new Float32Array(slots), [slots]),
  });
  const quantiles = output(out, 'quantiles', [rows.length, Q, slots]);
  return rows.map((_, r) => {
    // The row's levels over the horizon, in one buffer (views of it), copied in a plain loop.
    const kept = new Float64Array(Q * horizon);
    for (let k = 0; k < Q; k++) for (let t = 0; t < horizon; t++) kept[k * horizon + t] = quantiles[(r * Q + k) * slots + t];
    const perLevel = Array.from({ length: Q }, (_, k) => kept.subarray(k * horizon, (k + 1) * horizon));
    const atStep = new Float64Array(Q);
    const mean = new Float64Array(horizon);
    for (let t = 0; t < horizon; t++) {
      for (let k = 0; k < Q; k++) atStep[k] = perLevel[k][t];
      mean[t] = quantileMean(m.quantile_levels, atStep);
    }
    return { mean, quantiles: perLevel };
  });
}

/** The reference's forecast of series of one horizon, in input order. */
export async function predictPatchTSTFM(
  run: Runner,
  m: PatchTSTFMManifest,
  histories: readonly Float64Array[],
  horizon: number,
): Promise<PatchTSTFMForecast[]> {
  requireHorizonInRange('patchtst-fm', m, horizon);
  const slots = forecastSlots(m, horizon);
  const rows = histories.map((h) => windowRow(m, h, slots));
  // Calls of rows with similar patch counts, so that little padding is computed.
  const order = rows.map((_, i) => i).sort((a, b) => rows[a].patches - rows[b].patches);
  const out: PatchTSTFMForecast[] = new Array(rows.length);
  for (let start = 0; start < order.length;) {
    let end = start + 1;
    while (end < order.length && (end + 1 - start) * rows[order[end]].patches <= PATCHES_PER_CALL) end++;
    const batch = order.slice(start, end);
    const forecasts = await runWindows(
      run,
      m,
      batch.map((i) => rows[i]),
      rows[order[end - 1]].patches,
      slots,
      horizon,
    );
    batch.forEach((i, k) => (out[i] = forecasts[k]));
    start = end;
  }
  return out;
}

/** The service's forecast of tasks, in input order: univariate, one batch per horizon. */
export async function forecastPatchTSTFM(run: Runner, m: PatchTSTFMManifest, tasks: readonly ForecastTask[]): Promise<ForecastOutput[]> {
  const byHorizon = new Map<number, number[]>();
  tasks.forEach((task, i) => {
    const c = task.covariates;
    if (c && Object.keys(c.hist).length + Object.keys(c.future).length + Object.keys(c.static).length > 0) {
      throw new ModelInputError('patchtst-fm takes no covariates (the reference forecasts each series from its own history)');
    }
    byHorizon.set(task.horizon, [...(byHorizon.get(task.horizon) ?? []), i]);
  });
  const out: ForecastOutput[] = new Array(tasks.length);
  for (const [horizon, indices] of byHorizon) {
    const forecasts = await predictPatchTSTFM(
      run,
      m,
      indices.map((i) => tasks[i].history),
      horizon,
    );
    indices.forEach((taskIndex, k) => {
      const f = forecasts[k];
      out[taskIndex] = { mean: f.mean, quantiles: mapQuantileSteps(m.quantile_levels, (level) => f.quantiles[level], tasks[taskIndex].quantiles, horizon) };
    });
  }
  return out;
}

/** The service's patchtst-fm (MODELS_DIR/patchtst-fm). */
export const patchtstFMModel = (settings: ModelSettings): GlobalModel =>
  onnxModel('patchtst-fm', settings, (run, manifest, tasks) => forecastPatchTSTFM(run, manifest, tasks));
