/**
 * TiRex-2's post-processor (tirex-2 0.4.0, `tirex2/model/component/postprocessor.py`,
 * `PostProcessor`) in TypeScript: the trend detection that decides which targets the network sees
 * differenced, and the output side that calibrates the quantile band of raw targets and
 * integrates differenced ones back to levels. The network's rows are float32 (the reference's
 * tensors): targets are rounded to float32 before any of this, as `torch.from_numpy` of float32.
 */
import type { Tirex2Manifest } from './model-store.ts';

type PostConfig = Tirex2Manifest['forecast_config'];

/** Python's round(): half to even. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * `PostProcessor._detect_trends` for one target: an OLS line through the z-scored observed
 * values of the last `trend_window` of the series (`_ols_sigma_score`, in float64 as its numpy
 * code); the target is differenced when |slope| * window >= trend_threshold and R^2 >= trend_min_r2.
 */
export function isTrending(target: Float32Array, c: PostConfig): boolean {
  const window = Math.max(1, roundHalfEven(c.trend_window * target.length));
  const start = target.length - window;
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = start; i < target.length; i++) {
    if (Number.isNaN(target[i])) continue;
    xs.push(i - start);
    ys.push(target[i]);
  }
  const n = ys.length;
  if (n < 4) return false;
  const mean = ys.reduce((a, b) => a + b, 0) / n;
  const std = Math.sqrt(ys.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  if (std < 1e-12) return false;
  const z = ys.map((y) => (y - mean) / std);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const mz = z.reduce((a, b) => a + b, 0) / n;
  let sxz = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxz += (xs[i] - mx) * (z[i] - mz);
    sxx += (xs[i] - mx) ** 2;
  }
  const slope = sxz / sxx;
  const intercept = mz - slope * mx;
  let ssRes = 0;
  let ssTot = 0;
  for (let i = 0; i < n; i++) {
    ssRes += (z[i] - (slope * xs[i] + intercept)) ** 2;
    ssTot += (z[i] - mz) ** 2;
  }
  const r2 = ssTot > 1e-12 ? 1 - ssRes / ssTot : 0;
  return Math.abs(slope) * window >= c.trend_threshold && r2 >= c.trend_min_r2;
}

/** `PostProcessor._diff_forward`: first differences with a leading 0 (NaN next to a missing value). */
export function differenced(target: Float32Array): Float32Array {
  const out = new Float32Array(target.length);
  for (let t = 1; t < target.length; t++) out[t] = target[t] - target[t - 1];
  return out;
}

/** `PostProcessor._diff_params`: the last observed value, 0 when there is none. */
export function lastObserved(target: Float32Array): number {
  for (let t = target.length - 1; t >= 0; t--) if (!Number.isNaN(target[t])) return target[t];
  return 0;
}

/**
 * `PostProcessor.transform_output` for one target, in place: `quantiles` [level][step] of the
 * network's output over the horizon. The median channel is the middle one (`Q // 2`), as the
 * reference takes it. A raw target's band is widened by sqrt(raw_band_scale) * t^(raw_band_exponent
 * - 0.5) around its median; a differenced one is integrated (`_diff_inverse`): the cumulative
 * median path, plus sign * sqrt(cumulative squared offset) * t^(diff_band_exponent - 0.5) *
 * sqrt(diff_band_scale) for each level, plus the last observed value.
 */
export function postprocess(quantiles: Float64Array[], wasDifferenced: boolean, last: number, c: PostConfig): void {
  const median = quantiles[Math.floor(quantiles.length / 2)].slice();
  const steps = median.length;
  if (!wasDifferenced) {
    const gain = Math.sqrt(c.raw_band_scale);
    for (const q of quantiles) {
      for (let t = 0; t < steps; t++) q[t] = median[t] + gain * (t + 1) ** (c.raw_band_exponent - 0.5) * (q[t] - median[t]);
    }
    return;
  }
  const path = new Float64Array(steps);
  for (let t = 0, acc = 0; t < steps; t++) path[t] = acc += median[t];
  const gain = Math.sqrt(c.diff_band_scale);
  for (const q of quantiles) {
    let total = 0;
    for (let t = 0; t < steps; t++) total += q[t] - median[t];
    const sign = Math.sign(total);
    let squares = 0;
    for (let t = 0; t < steps; t++) {
      const offset = q[t] - median[t];
      squares += offset * offset;
      q[t] = path[t] + gain * sign * Math.sqrt(squares) * (t + 1) ** (c.diff_band_exponent - 0.5) + last;
    }
  }
}
