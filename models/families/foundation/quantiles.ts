/**
 * Quantile arithmetic shared by the foundation model adapters: the reference implementations'
 * interpolation rules, and the mapping of a model's own quantile levels to the requested ones.
 */
import { countAtMost } from '../../numerics/sorted-search.ts';

/**
 * Linear interpolation of values known at `levels` (increasing), queried at `query`; flat beyond
 * the first and last level. This is chronos.utils.interpolate_quantiles for one row: the end
 * values are repeated at levels 0 and 1 when those are not given, a query equal to a level takes
 * that level's value, and the bracket is the first level strictly above the query.
 */
export function interpolateAt(levels: ArrayLike<number>, values: ArrayLike<number>, query: number): number {
  const n = levels.length;
  // At or below the first level: the first value (the reference pads level 0 with it).
  if (query <= levels[0]) return values[0];
  const upper = countAtMost(levels, query);
  if (upper >= n) return values[n - 1];
  const lower = upper - 1;
  const span = levels[upper] - levels[lower];
  const weight = span > 0 ? (query - levels[lower]) / span : 0;
  return values[lower] + weight * (values[upper] - values[lower]);
}

/** `interpolateAt` for several query levels at once. */
export function interpolate(
  levels: ArrayLike<number>,
  values: ArrayLike<number>,
  query: readonly number[],
  out = new Float64Array(query.length),
): Float64Array {
  for (let i = 0; i < query.length; i++) out[i] = interpolateAt(levels, values, query[i]);
  return out;
}

/**
 * The model's quantile values at its own levels, mapped to the requested levels by monotone
 * interpolation: the values are first put in increasing order (so crossing quantiles of a model
 * never yield a requested 0.9 below a requested 0.1), then interpolated linearly between levels,
 * flat beyond the model's first and last level. For non-crossing outputs (a trained model's) it
 * equals the reference's own interpolation.
 */
export function mapQuantiles(
  levels: readonly number[],
  values: ArrayLike<number>,
  query: readonly number[],
  out = new Float64Array(query.length),
): Float64Array {
  return interpolate(levels, increasing(values), query, out);
}

/**
 * The requested levels of every step of a forecast: `channel(k)` holds the model's level k over
 * the steps. Adapters call this for every series of a batch, so the work that does not depend on
 * the values is done once: each requested level's bracket of model levels (`interpolateAt`'s
 * search) is found before the steps, and one scratch row serves all steps. The arithmetic per
 * value is `interpolateAt`'s, so the results are the same to the bit.
 */
export function mapQuantileSteps(
  levels: readonly number[],
  channel: (k: number) => ArrayLike<number>,
  query: readonly number[],
  horizon: number,
): Float64Array[] {
  // One buffer for all the requested levels (a typed array's own buffer costs more than a view).
  const all = new Float64Array(query.length * horizon);
  const out = query.map((_, i) => all.subarray(i * horizon, (i + 1) * horizon));
  const atStep = new Float64Array(levels.length);
  const channels = levels.map((_, k) => channel(k));
  const brackets = query.map((q) => bracketOf(levels, q));
  for (let t = 0; t < horizon; t++) {
    for (let k = 0; k < levels.length; k++) atStep[k] = channels[k][t];
    // mapQuantiles' rule, sorting the scratch row in place instead of a copy.
    sortIncreasing(atStep);
    for (let i = 0; i < query.length; i++) {
      const { lower, upper, weight } = brackets[i];
      out[i][t] = upper < 0 ? atStep[lower] : atStep[lower] + weight * (atStep[upper] - atStep[lower]);
    }
  }
  return out;
}

/**
 * Where `interpolateAt` reads a query level: between `lower` and `upper` at `weight`, or the value
 * at `lower` alone (`upper` -1) at or beyond the end levels.
 */
function bracketOf(levels: readonly number[], query: number): { lower: number; upper: number; weight: number } {
  const n = levels.length;
  if (query <= levels[0]) return { lower: 0, upper: -1, weight: 0 };
  const upper = countAtMost(levels, query);
  if (upper >= n) return { lower: n - 1, upper: -1, weight: 0 };
  const lower = upper - 1;
  const span = levels[upper] - levels[lower];
  return { lower, upper, weight: span > 0 ? (query - levels[lower]) / span : 0 };
}

/** The values in increasing order, sorted in place; a trained model's usually are already. */
function increasing<T extends ArrayLike<number>>(values: T): T | Float64Array {
  for (let i = 1; i < values.length; i++) if (values[i] < values[i - 1]) return sortIncreasing(new Float64Array(values as ArrayLike<number>));
  return values;
}

/**
 * `values.sort()` in place, by insertion: a model's quantiles at one step are few and nearly in
 * order, where this is faster than the typed array's sort (on TimesFM 2.0's crossing channels,
 * `npm run bench -- onnx`). With a NaN among them the typed array's sort
 * (NaN last) is used, so the result is the same in every case.
 */
export function sortIncreasing(values: Float64Array): Float64Array {
  for (let i = 1; i < values.length; i++) {
    const v = values[i];
    if (Number.isNaN(v)) return values.sort();
    let j = i - 1;
    while (j >= 0 && values[j] > v) {
      values[j + 1] = values[j];
      j--;
    }
    values[j + 1] = v;
  }
  if (values.length > 0 && Number.isNaN(values[0])) return values.sort();
  return values;
}

/**
 * Probability mass per quantile level, by the trapezoidal rule (Chronos2Pipeline's
 * `_get_prob_mass_per_quantile_level`): (q[i+1] - q[i-1]) / 2 with q[-1] = 0 and q[n] = 1,
 * normalised.
 */
export function probabilityMass(levels: readonly number[]): Float64Array {
  const n = levels.length;
  const mass = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const before = i === 0 ? 0 : levels[i - 1];
    const after = i === n - 1 ? 1 : levels[i + 1];
    mass[i] = (after - before) / 2;
    total += mass[i];
  }
  for (let i = 0; i < n; i++) mass[i] /= total;
  return mass;
}

/**
 * Quantiles of a weighted sample (chronos.utils.weighted_quantile for one row): samples sorted,
 * cumulative normalised weights (clamped to [0, 1]) as their levels, then `interpolateAt`.
 * `scratch` arrays of the samples' length may be passed to avoid allocations in a loop; `run`
 * is the length of runs that are usually sorted already (one path's quantiles), for speed.
 */
export function weightedQuantiles(
  query: readonly number[],
  weights: Float64Array,
  samples: Float64Array,
  out: Float64Array,
  scratch: WeightedScratch = weightedScratch(samples.length),
  run = 16,
): Float64Array {
  const n = samples.length;
  const { order, sorted, cumulative, merge } = scratch;
  let total = 0;
  for (let i = 0; i < n; i++) {
    order[i] = i;
    total += weights[i];
  }
  sortIndices(order, samples, run, merge);
  let running = 0;
  for (let i = 0; i < n; i++) {
    sorted[i] = samples[order[i]];
    running += weights[order[i]] / total;
    cumulative[i] = Math.min(1, Math.max(0, running));
  }
  for (let i = 0; i < query.length; i++) out[i] = interpolateAt(cumulative, sorted, query[i]);
  return out;
}

/** Buffers of weightedQuantiles for samples of one length, reused across the calls of a loop. */
export interface WeightedScratch {
  order: Uint32Array;
  sorted: Float64Array;
  cumulative: Float64Array;
  merge: Uint32Array;
}

export const weightedScratch = (n: number): WeightedScratch => ({
  order: new Uint32Array(n),
  sorted: new Float64Array(n),
  cumulative: new Float64Array(n),
  merge: new Uint32Array(n),
});

/**
 * Sorts indices by their values, ties by index (a stable order), in place. Insertion sort over
 * runs (linear on a sorted run) then bottom-up merges into `buffer`: the hot loop of the
 * long-horizon merge, so the comparisons are written out rather than called.
 */
function sortIndices(order: Uint32Array, values: Float64Array, RUN: number, buffer: Uint32Array): void {
  const n = order.length;
  for (let start = 0; start < n; start += RUN) {
    const end = Math.min(start + RUN, n);
    for (let i = start + 1; i < end; i++) {
      const item = order[i];
      const v = values[item];
      let j = i - 1;
      // Indices within a run are increasing, so ties keep their order by stopping at equality.
      while (j >= start && v < values[order[j]]) {
        order[j + 1] = order[j];
        j--;
      }
      order[j + 1] = item;
    }
  }
  if (n <= RUN) return;
  let from: Uint32Array = order;
  let to: Uint32Array = buffer;
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      // The left run holds the smaller indices: on a tie it goes first (stable).
      while (i < mid && j < hi) to[k++] = values[from[j]] < values[from[i]] ? from[j++] : from[i++];
      while (i < mid) to[k++] = from[i++];
      while (j < hi) to[k++] = from[j++];
    }
    [from, to] = [to, from];
  }
  if (from !== order) order.set(from);
}
