/**
 * TabPFNRegressor's output (tabpfn 6.4.1, `predict` with the pipeline's `output_type="main"`): each
 * member's tempered logits read on its own borders, carried onto the standard borders, averaged over
 * the members as probabilities, and read as quantiles on the borders scaled back to the data
 * (`BarDistribution.icdf`: linear within a bucket). Float32 where the package computes in float32.
 */
import type { PowerScaler } from './tabpfn-ts-transforms.ts';
import { invertSafePower } from './tabpfn-ts-transforms.ts';

const f32 = Math.fround;
const NAN_BORDER_LIMIT = 1e3;

/** `transform_borders_one` with a "safepower" target transform: the member's borders and the buckets it cancels. */
export function memberBorders(standard: readonly number[], transform: PowerScaler): { borders: number[]; cancel: boolean[] | null } {
  let borders = standard.map((b) => f32(invertSafePower(transform, b)));
  const broken = borders.map((b) => !Number.isFinite(b) || b > NAN_BORDER_LIMIT || b < -NAN_BORDER_LIMIT);
  let cancel: boolean[] | null = null;
  if (broken.some(Boolean)) {
    // _cancel_nan_borders: broken runs at either end take the nearest sound border (an outermost one a unit beyond).
    const n = borders.length;
    borders = [...borders];
    const firstSound = broken.indexOf(false);
    if (broken[0] && firstSound > 0) {
      for (let i = 0; i < firstSound; i++) borders[i] = borders[firstSound];
      borders[0] = borders[1] - 1;
    }
    const lastSound = broken.lastIndexOf(false);
    if (broken[n - 1] && lastSound < n - 1) {
      for (let i = lastSound + 1; i < n; i++) borders[i] = borders[lastSound];
      borders[n - 1] = borders[n - 2] + 1;
    }
    cancel = Array.from({ length: n - 1 }, (_, i) => broken[i] || broken[i + 1]);
  }
  // _repair_borders.
  const n = borders.length;
  if (borders[n - 1] - borders[n - 2] < 1e-6) borders[n - 1] = f32(borders[n - 1] * 1.1);
  if (borders[0] === borders[1]) borders[0] = f32(borders[0] - Math.abs(borders[0] * 0.1));
  return { borders, cancel };
}

function softmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  const out = Float64Array.from(logits, (v) => f32(Math.exp(v - max)));
  let sum = 0;
  for (const v of out) sum = f32(sum + v);
  return out.map((v) => f32(v / sum));
}

/** The probabilities of `logits` on borders `from`, translated onto borders `to` (`_cdf` at `to`, differenced). */
export function translate(logits: ArrayLike<number>, from: readonly number[], to: readonly number[]): Float64Array {
  const probs = softmax(logits);
  const bars = from.length - 1;
  const before = new Float64Array(bars);
  let cum = 0;
  for (let i = 0; i < bars; i++) {
    const next = f32(cum + probs[i]);
    before[i] = f32(next - probs[i]);
    cum = next;
  }
  const left = to.map((y) => {
    if (y <= from[0]) return 0;
    if (y >= from[bars]) return 1;
    let lo = 0; // searchsorted(from, y) - 1, clamped
    let hi = from.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (from[mid] < y) lo = mid + 1;
      else hi = mid;
    }
    const ix = Math.min(Math.max(lo - 1, 0), bars - 1);
    const share = Math.min(Math.max(f32(f32(y - from[ix]) / f32(from[ix + 1] - from[ix])), 0), 1);
    return Math.min(Math.max(f32(before[ix] + f32(probs[ix] * share)), 0), 1);
  });
  left[0] = 0;
  left[left.length - 1] = 1;
  return Float64Array.from({ length: to.length - 1 }, (_, i) => Math.max(f32(left[i + 1] - left[i]), 0));
}

/** `BarDistribution.icdf` of bucket probabilities (renormalised, as softmax(log p) does) at `level`. */
export function icdf(probs: ArrayLike<number>, borders: readonly number[], level: number): number {
  let total = 0;
  for (let i = 0; i < probs.length; i++) total += probs[i];
  const p = Float64Array.from(probs, (v) => f32(v / total));
  const n = p.length;
  const q = f32(level);
  const cum = new Float64Array(n);
  let run = 0;
  for (let i = 0; i < n; i++) cum[i] = run = f32(run + p[i]);
  // searchsorted(cumprobs, q) (the first bucket whose cumulative probability reaches q), clamped.
  let idx = 0;
  while (idx < n && cum[idx] < q) idx++;
  idx = Math.min(idx, n - 1);
  const before = idx === 0 ? 0 : cum[idx - 1];
  const rest = f32(q - before);
  const lo = borders[idx];
  const hi = borders[idx + 1];
  return f32(lo + f32(f32(f32(hi - lo) * rest) / p[idx]));
}
