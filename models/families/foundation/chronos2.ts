/**
 * Chronos-2 on ONNX Runtime: the pre- and post-processing of the reference's Chronos2Pipeline
 * (chronos-forecasting 2.3) around an exported Chronos2Model.forward (tools/export/chronos2.py).
 *
 * Per task, as Chronos2Dataset builds it: a group of rows, the target first, then the past-only
 * covariates, then the known-future covariates (each kind in name order); each row is cut to the
 * model's context length, rows are left-padded with NaN to the batch's longest, and the rows of a
 * task share a group id so that the model's group attention mixes them and nothing else (with
 * cross_learning, the API's is_global, every row of the batch shares one group). Tasks
 * are batched in order until a batch holds `batch_size` rows. Horizons past the model's native
 * output (max_output_patches patches) are rolled out as the pipeline does: the context is
 * expanded along the unrolled quantiles, each path's forecast is appended to it (known future
 * covariate values replacing their forecasts), and the paths' quantiles are merged by weighted
 * quantiles.
 *
 * The point forecast is the model's median (the pipeline's `mean`); requested levels come from
 * the model's levels by monotone interpolation (quantiles.ts).
 */
import type { ContextSeries, CovariateValue, ForecastOutput, ForecastTask, GlobalModel, ModelSettings } from '../../contract/model-interface.ts';
import { creationTime, ModelInputError } from '../../contract/model-interface.ts';
import { interpolate, mapQuantileSteps, probabilityMass, weightedQuantiles, weightedScratch } from './quantiles.ts';
import { float32, int64, onnxModel, output, type Runner } from './onnx-session.ts';
import type { Chronos2Manifest } from './model-store.ts';

/** One task as the pipeline sees it: NaN marks a missing value. */
export interface Chronos2Input {
  readonly target: Float64Array;
  /** Past-only covariates, each as long as the target. */
  readonly pastOnly: readonly Float64Array[];
  /** Known-future covariates: values over the history (target's length) and over the horizon. */
  readonly known: readonly { readonly past: Float64Array; readonly future: Float64Array }[];
}

function numeric(values: readonly CovariateValue[], name: string): Float64Array {
  return Float64Array.from(values, (v) => {
    if (typeof v !== 'number') throw new ModelInputError(`chronos-2 takes numeric covariates only; '${name}' has the string value '${v}'`);
    return v;
  });
}

const byName = <T>(record: Readonly<Record<string, T>>) =>
  Object.keys(record)
    .sort()
    .map((k) => [k, record[k]] as const);

/**
 * A covariate constant over its observed history, moved to 0 (its future values by the same
 * amount). The model scales each row by its own mean and spread, so a constant row is all
 * zeros whatever its level; computed on the level itself, the spread is float rounding noise
 * instead of zero and, through the group attention, the target's forecast would depend on that
 * noise. The shift gives the exact-arithmetic result.
 */
function centreIfConstant(past: Float64Array, future?: Float64Array): { past: Float64Array; future?: Float64Array } {
  let level = NaN;
  for (const v of past) {
    if (Number.isNaN(v)) continue;
    if (Number.isNaN(level)) level = v;
    else if (v !== level) return { past, future };
  }
  if (Number.isNaN(level) || level === 0) return { past, future };
  return { past: past.map((v) => v - level), future: future?.map((v) => v - level) };
}

/** A task's target and covariates in the pipeline's row order. */
export function chronos2Input(task: ForecastTask): Chronos2Input {
  const n = task.history.length;
  const h = task.horizon;
  const cov = task.covariates;
  if (!cov) return { target: task.history, pastOnly: [], known: [] };
  if (Object.keys(cov.static).length > 0) {
    // The model has no static input; the request checks refuse them before this point.
    throw new ModelInputError('chronos-2 takes past and future covariates only, not static variables');
  }
  const pastOnly = byName(cov.hist).map(([name, v]) => {
    if (v.length !== n) throw new ModelInputError(`historical variable '${name}' has ${v.length} values; expected the history's ${n}`);
    return centreIfConstant(numeric(v, name)).past;
  });
  const known = byName(cov.future).map(([name, v]) => {
    const all = numeric(v, name);
    if (all.length !== n + h) throw new ModelInputError(`future variable '${name}' has ${all.length} values; expected history + horizon = ${n + h}`);
    const { past, future } = centreIfConstant(all.subarray(0, n), all.subarray(n));
    return { past, future: future! };
  });
  return { target: task.history, pastOnly, known };
}

interface Rows {
  /** Row-major contexts, `width` values each, left-padded with NaN. */
  context: Float64Array;
  width: number;
  count: number;
  groupIds: BigInt64Array;
  /** Row-major future covariates, `futureWidth` each; NaN where unknown. */
  future: Float64Array;
  futureWidth: number;
}

/**
 * The native forecast of one batch of tasks with the same horizon: per task, its target's
 * quantiles at the model's levels, [level][step].
 */
export async function predictChronos2(
  run: Runner,
  manifest: Chronos2Manifest,
  inputs: readonly Chronos2Input[],
  horizon: number,
  crossLearning = false,
): Promise<Float64Array[][]> {
  const out: Float64Array[][] = [];
  const limit = manifest.options.batch_size;
  for (let start = 0; start < inputs.length;) {
    // Chronos2Dataset's sequential batches: add tasks while the batch has fewer than batch_size rows.
    let end = start;
    let rows = 0;
    while (end < inputs.length && rows < limit) {
      rows += 1 + inputs[end].pastOnly.length + inputs[end].known.length;
      end++;
    }
    out.push(...(await predictBatch(run, manifest, inputs.slice(start, end), horizon, crossLearning)));
    start = end;
  }
  return out;
}

/** A batch's rows; each task is a group of its own, or with cross-learning the batch is one group. */
function buildRows(
  manifest: Chronos2Manifest,
  inputs: readonly Chronos2Input[],
  horizon: number,
  crossLearning: boolean,
): { rows: Rows; targetRows: number[] } {
  const C = manifest.context_length;
  const series: Float64Array[] = [];
  const futures: (Float64Array | null)[] = [];
  const groups: number[] = [];
  const targetRows: number[] = [];
  inputs.forEach((input, task) => {
    const group = crossLearning ? 0 : task;
    const n = input.target.length;
    const cut = (a: Float64Array) => (n >= C ? a.subarray(n - C, n) : a);
    targetRows.push(series.length);
    series.push(cut(input.target));
    futures.push(null);
    groups.push(group);
    for (const p of input.pastOnly) {
      series.push(cut(p));
      futures.push(null);
      groups.push(group);
    }
    for (const k of input.known) {
      series.push(cut(k.past));
      futures.push(k.future);
      groups.push(group);
    }
  });
  const width = Math.max(...series.map((s) => s.length));
  const count = series.length;
  const context = new Float64Array(count * width).fill(NaN);
  series.forEach((s, r) => context.set(s, r * width + width - s.length));
  const future = new Float64Array(count * horizon).fill(NaN);
  futures.forEach((f, r) => f && future.set(f.subarray(0, horizon), r * horizon));
  return { rows: { context, width, count, groupIds: BigInt64Array.from(groups, BigInt), future, futureWidth: horizon }, targetRows };
}

/**
 * Network calls of whole groups, at most rows_per_call rows each (a larger group gets a call of
 * its own): the group attention compares every row of a call with every other, so its cost grows
 * with the square of the rows per call, while rows of different groups never interact. Rows keep
 * their order within a group; groups come in order of their first row.
 */
function callsByGroup(groupIds: BigInt64Array, limit: number): Int32Array[] {
  const members = new Map<bigint, number[]>();
  groupIds.forEach((g, row) => {
    const list = members.get(g);
    if (list) list.push(row);
    else members.set(g, [row]);
  });
  const calls: Int32Array[] = [];
  let call: number[] = [];
  for (const rows of members.values()) {
    if (call.length > 0 && call.length + rows.length > limit) {
      calls.push(Int32Array.from(call));
      call = [];
    }
    for (const row of rows) call.push(row);
  }
  if (call.length > 0) calls.push(Int32Array.from(call));
  return calls;
}

/**
 * The exported forward on every row: contexts left-padded with NaN to whole patches (what the
 * model's Patch layer does), future covariates padded with NaN or cut to the output length.
 * Returns [row][level * length + step].
 */
async function predictStep(run: Runner, manifest: Chronos2Manifest, rows: Rows, patches: number): Promise<{ values: Float32Array; length: number }> {
  const P = manifest.patch_size;
  const Q = manifest.quantile_levels.length;
  const width = Math.ceil(rows.width / P) * P;
  const pad = width - rows.width;
  const length = patches * manifest.output_patch_size;
  const copy = Math.min(length, rows.futureWidth);
  const values = new Float32Array(rows.count * Q * length);
  for (const call of callsByGroup(rows.groupIds, manifest.options.rows_per_call)) {
    const count = call.length;
    const context = new Float32Array(count * width).fill(NaN);
    const future = new Float32Array(count * length).fill(NaN);
    const groupIds = new BigInt64Array(count);
    call.forEach((row, r) => {
      context.set(rows.context.subarray(row * rows.width, (row + 1) * rows.width), r * width + pad);
      future.set(rows.future.subarray(row * rows.futureWidth, row * rows.futureWidth + copy), r * length);
      groupIds[r] = rows.groupIds[row];
    });
    const outputs = await run({
      context: float32(context, [count, width]),
      group_ids: int64(groupIds, [count]),
      future_covariates: float32(future, [count, length]),
    });
    const predicted = output(outputs, 'quantile_preds', [count, Q, length]);
    call.forEach((row, r) => values.set(predicted.subarray(r * Q * length, (r + 1) * Q * length), row * Q * length));
  }
  return { values, length };
}

async function predictBatch(
  run: Runner,
  manifest: Chronos2Manifest,
  inputs: readonly Chronos2Input[],
  horizon: number,
  crossLearning: boolean,
): Promise<Float64Array[][]> {
  const levels = manifest.quantile_levels;
  const Q = levels.length;
  const C = manifest.context_length;
  const patchesFor = (remaining: number) => Math.min(Math.ceil(remaining / manifest.output_patch_size), manifest.max_output_patches);
  const { rows, targetRows } = buildRows(manifest, inputs, horizon, crossLearning);
  // forecast[row][level] over the whole horizon, filled step by step.
  const forecast = Array.from({ length: rows.count }, () => Array.from({ length: Q }, () => new Float64Array(horizon)));
  let done = 0;

  const first = await predictStep(run, manifest, rows, patchesFor(horizon));
  const keep = (row: number, level: number, step: number, value: number) => {
    if (done + step < horizon) forecast[row][level][done + step] = value;
  };
  for (let r = 0; r < rows.count; r++)
    for (let q = 0; q < Q; q++) for (let t = 0; t < first.length; t++) keep(r, q, t, first.values[(r * Q + q) * first.length + t]);
  done += first.length;

  if (done < horizon) {
    // Long horizons: one path per unrolled quantile, in the group's own copy per path.
    const unrolled = manifest.options.unrolled_quantiles;
    const U = unrolled.length;
    const pathMass = probabilityMass(unrolled);
    const levelMass = probabilityMass(levels);
    const weights = new Float64Array(U * Q);
    for (let u = 0; u < U; u++) for (let q = 0; q < Q; q++) weights[u * Q + q] = pathMass[u] * levelMass[q];

    // Paths are rows of their own: row r's path u is row r * U + u.
    const R = rows.count * U;
    let width = rows.width;
    let context = new Float64Array(R * width);
    for (let r = 0; r < rows.count; r++) for (let u = 0; u < U; u++) context.set(rows.context.subarray(r * width, (r + 1) * width), (r * U + u) * width);
    const groupIds = new BigInt64Array(R);
    for (let r = 0; r < rows.count; r++) for (let u = 0; u < U; u++) groupIds[r * U + u] = rows.groupIds[r] * BigInt(U) + BigInt(u);
    let futureWidth = rows.futureWidth;
    let future = new Float64Array(R * futureWidth);
    for (let r = 0; r < rows.count; r++)
      for (let u = 0; u < U; u++) future.set(rows.future.subarray(r * futureWidth, (r + 1) * futureWidth), (r * U + u) * futureWidth);

    let previous = first;
    const samples = new Float64Array(U * Q);
    const merged = new Float64Array(Q);
    const scratch = weightedScratch(U * Q);
    const atLevels = new Float64Array(Q);
    const atPaths = new Float64Array(U);
    while (done < horizon) {
      // Append each path's quantile of the previous forecast, keep the last C values.
      const L = previous.length;
      const grown = Math.min(width + L, C);
      const next = new Float64Array(R * grown);
      const kept = grown - L; // values of the old context that stay (C >= L: manifest check)
      for (let r = 0; r < rows.count; r++) {
        for (let t = 0; t < L; t++) {
          for (let q = 0; q < Q; q++) atLevels[q] = previous.values[(r * Q + q) * L + t];
          interpolate(levels, atLevels, unrolled, atPaths);
          for (let u = 0; u < U; u++) {
            const path = r * U + u;
            let value = atPaths[u];
            // A known future covariate's actual value replaces its forecast.
            const known = future[path * futureWidth + t];
            if (!Number.isNaN(known)) value = known;
            next[path * grown + kept + t] = value;
          }
        }
        for (let u = 0; u < U; u++) {
          const path = r * U + u;
          if (kept > 0) next.set(context.subarray(path * width + width - kept, (path + 1) * width), path * grown);
        }
      }
      context = next;
      width = grown;
      const shifted = futureWidth - L;
      const nextFuture = new Float64Array(R * shifted);
      for (let path = 0; path < R; path++) nextFuture.set(future.subarray(path * futureWidth + L, (path + 1) * futureWidth), path * shifted);
      future = nextFuture;
      futureWidth = shifted;

      const step = await predictStep(run, manifest, { context, width, count: R, groupIds, future, futureWidth }, patchesFor(horizon - done));
      const S = step.length;
      // Each row's U x Q path quantiles merged into Q quantiles, which the next step unrolls.
      const values = new Float32Array(rows.count * Q * S);
      for (let r = 0; r < rows.count; r++) {
        for (let t = 0; t < S; t++) {
          for (let u = 0; u < U; u++) for (let q = 0; q < Q; q++) samples[u * Q + q] = step.values[((r * U + u) * Q + q) * S + t];
          weightedQuantiles(levels, weights, samples, merged, scratch, Q);
          for (let q = 0; q < Q; q++) {
            values[(r * Q + q) * S + t] = merged[q];
            keep(r, q, t, merged[q]);
          }
        }
      }
      previous = { values, length: S };
      done += S;
    }
  }
  return targetRows.map((row) => forecast[row]);
}

/** The requested output from the native quantiles [level][step]. */
export function chronos2Output(manifest: Chronos2Manifest, native: Float64Array[], requested: readonly number[], horizon: number): ForecastOutput {
  const levels = manifest.quantile_levels;
  const mean = native[levels.indexOf(0.5)].slice();
  return { mean, quantiles: mapQuantileSteps(levels, (q) => native[q], requested, horizon) };
}

export interface Chronos2Options {
  /** The pipeline's cross_learning (the API's is_global): tasks are forecast jointly. */
  readonly crossLearning?: boolean;
  /** only_as_context series: with cross-learning they join the tasks as unforecast rows. */
  readonly context?: readonly ContextSeries[];
}

/** A context series up to and including `time` (all of it when times are unknown). */
function contextUpTo(series: ContextSeries, time: number): Chronos2Input | null {
  let count = series.values.length;
  if (!Number.isNaN(time)) while (count > 0 && series.times[count - 1] > time) count--;
  return count > 0 ? { target: series.values.subarray(0, count), pastOnly: [], known: [] } : null;
}

/**
 * Forecasts tasks of any horizons with an installed model, in input order. Tasks are predicted
 * in sets of one horizon; with cross-learning also of one creation time (the last history step),
 * so that in a backtest a forecast never learns from another series' values after its own
 * creation date, and only_as_context series join each set cut at that time.
 */
export async function forecastChronos2(
  run: Runner,
  manifest: Chronos2Manifest,
  tasks: readonly ForecastTask[],
  options: Chronos2Options = {},
): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = new Array(tasks.length);
  const sets = new Map<string, number[]>();
  tasks.forEach((t, i) => {
    const key = options.crossLearning ? `${t.horizon}@${creationTime(t)}` : String(t.horizon);
    const same = sets.get(key);
    if (same) same.push(i);
    else sets.set(key, [i]);
  });
  for (const indices of sets.values()) {
    const { horizon } = tasks[indices[0]];
    const inputs = indices.map((i) => chronos2Input(tasks[i]));
    if (options.crossLearning) {
      const time = creationTime(tasks[indices[0]]);
      for (const series of options.context ?? []) {
        const input = contextUpTo(series, time);
        if (input) inputs.push(input);
      }
    }
    const native = await predictChronos2(run, manifest, inputs, horizon, options.crossLearning ?? false);
    indices.forEach((taskIndex, k) => (out[taskIndex] = chronos2Output(manifest, native[k], tasks[taskIndex].quantiles, horizon)));
  }
  return out;
}

/**
 * The service's chronos-2 (MODELS_DIR/chronos-2). By default each task forms its own group (the
 * pipeline's default, cross_learning=False) and `only_as_context` series do not take part;
 * `is_global` turns cross-learning on.
 */
export const chronos2Model = (settings: ModelSettings): GlobalModel =>
  onnxModel('chronos-2', settings, (run, manifest, tasks, context, options) =>
    forecastChronos2(run, manifest, tasks, { crossLearning: options.crossLearning, context }),
  );
