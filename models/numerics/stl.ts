/**
 * STL seasonal-trend decomposition by loess (Cleveland, Cleveland, McRae & Terpenning 1990),
 * non-robust. Two callers, two sets of defaults: R's stl(x, s.window) for aarima's seasonal
 * strength test (smoothers every ceiling(window / 10) points, 2 inner passes), and statsmodels' STL
 * for mstl (every point; low-pass window the next odd number above the period; 5 inner passes).
 * Indices are 1-based inside the smoothers, with arrays padded by one slot.
 */

function nextOdd(x: number): number {
  let v = Math.round(x);
  if (v % 2 === 0) v++;
  return v;
}

/**
 * Loess estimate at position xs from y[nleft..nright] (1-based): tricube weights on distance,
 * optional robustness weights, then a local constant (deg 0) or line (deg 1). Returns NaN
 * when every weight vanished (the caller keeps the data value then).
 */
function loessPoint(
  y: Float64Array,
  yOff: number,
  n: number,
  len: number,
  deg: number,
  xs: number,
  nleft: number,
  nright: number,
  w: Float64Array,
  rw: Float64Array | null,
  rwOff: number,
): number {
  const range = n - 1;
  let h = Math.max(xs - nleft, nright - xs);
  if (len > n) h += Math.trunc((len - n) / 2);
  const h9 = 0.999 * h;
  const h1 = 0.001 * h;
  let a = 0;
  for (let j = nleft; j <= nright; j++) {
    const r = Math.abs(j - xs);
    if (r <= h9) {
      let wj = 1;
      if (r > h1) {
        const u = r / h;
        const v = 1 - u * u * u;
        wj = v * v * v;
      }
      if (rw) wj = rw[rwOff + j] * wj;
      w[j] = wj;
      a += wj;
    } else {
      w[j] = 0;
    }
  }
  if (a <= 0) return NaN;
  for (let j = nleft; j <= nright; j++) w[j] /= a;
  if (h > 0 && deg > 0) {
    let c = 0;
    a = 0;
    for (let j = nleft; j <= nright; j++) a += w[j] * j;
    let b = xs - a;
    for (let j = nleft; j <= nright; j++) c += w[j] * (j - a) * (j - a);
    if (Math.sqrt(c) > 0.001 * range) {
      b /= c;
      for (let j = nleft; j <= nright; j++) w[j] = w[j] * (b * (j - a) + 1);
    }
  }
  let ys = 0;
  for (let j = nleft; j <= nright; j++) ys += w[j] * y[yOff + j];
  return ys;
}

/** Per point of a loess smooth evaluated at every point: its window's first position and weights (null: none left). */
interface Smoother {
  readonly left: Int32Array;
  readonly weights: (Float64Array | null)[];
}

const smoothers = new Map<string, Smoother>();
/**
 * The most weights one smooth keeps (its ends' windows hold about len^2 of them): longer windows
 * are weighed point by point. The cache holds up to four times this, then starts again.
 */
const MAX_KEPT_WEIGHTS = 1 << 20;
let keptWeights = 0;

/**
 * The weights of a loess smooth of n points with window len at every point. Where the window is
 * centred on the point (away from the ends) every point has the same weights: a local line through
 * a symmetric window is its weighted mean. A few lengths are kept, for the passes that follow.
 */
function smoother(n: number, len: number, deg: number, w: Float64Array): Smoother {
  const key = `${n},${len},${deg}`;
  const kept = smoothers.get(key);
  if (kept) return kept;
  const zeros = new Float64Array(n + 1);
  const left = new Int32Array(n + 1);
  const weights: (Float64Array | null)[] = new Array(n + 1).fill(null);
  const nsh = Math.trunc((len + 1) / 2);
  let nleft = 1;
  let nright = len;
  let centred: Float64Array | null = null;
  for (let i = 1; i <= n; i++) {
    if (i > nsh && nright !== n) {
      nleft++;
      nright++;
    }
    left[i] = nleft;
    if (centred !== null && i - nleft === nright - i) {
      weights[i] = centred;
      continue;
    }
    const none = Number.isNaN(loessPoint(zeros, 0, n, len, deg, i, nleft, nright, w, null, 0));
    weights[i] = none ? null : w.slice(nleft, nright + 1);
    if (!none && i - nleft === nright - i) centred = weights[i];
  }
  const size = len * len;
  if (keptWeights + size > 4 * MAX_KEPT_WEIGHTS) {
    smoothers.clear();
    keptWeights = 0;
  }
  keptWeights += size;
  const made = { left, weights };
  smoothers.set(key, made);
  return made;
}

/**
 * Loess smooth of y[1..n] (stored at yOff + 1 ...) into ys[ysOff + 1 ...], evaluated every
 * `jump` points and linearly interpolated in between.
 */
function loessSmooth(
  y: Float64Array,
  yOff: number,
  n: number,
  len: number,
  deg: number,
  jump: number,
  rw: Float64Array | null,
  rwOff: number,
  ys: Float64Array,
  ysOff: number,
  w: Float64Array,
): void {
  if (n < 2) {
    ys[ysOff + 1] = y[yOff + 1];
    return;
  }
  const at = (i: number, nleft: number, nright: number) => {
    const v = loessPoint(y, yOff, n, len, deg, i, nleft, nright, w, rw, rwOff);
    ys[ysOff + i] = Number.isNaN(v) ? y[yOff + i] : v;
  };
  const newnj = Math.min(jump, n - 1);
  let nleft = 1;
  let nright = n;
  if (len >= n) {
    nleft = 1;
    nright = n;
    for (let i = 1; i <= n; i += newnj) at(i, nleft, nright);
  } else if (newnj === 1 && rw === null && len * len <= MAX_KEPT_WEIGHTS) {
    // The weights depend on the positions alone, not on the values: STL's inner passes (and
    // MSTL's) smooth series of one length with one window again and again, so they are kept.
    const kernels = smoother(n, len, deg, w);
    for (let i = 1; i <= n; i++) {
      const kernel = kernels.weights[i];
      if (kernel === null) {
        ys[ysOff + i] = y[yOff + i];
        continue;
      }
      let v = 0;
      for (let k = 0, j = yOff + kernels.left[i]; k < kernel.length; k++, j++) v += kernel[k] * y[j];
      ys[ysOff + i] = v;
    }
  } else if (newnj === 1) {
    const nsh = Math.trunc((len + 1) / 2);
    nleft = 1;
    nright = len;
    for (let i = 1; i <= n; i++) {
      if (i > nsh && nright !== n) {
        nleft++;
        nright++;
      }
      at(i, nleft, nright);
    }
  } else {
    const nsh = Math.trunc((len + 1) / 2);
    for (let i = 1; i <= n; i += newnj) {
      if (i < nsh) {
        nleft = 1;
        nright = len;
      } else if (i >= n - nsh + 1) {
        nleft = n - len + 1;
        nright = n;
      } else {
        nleft = i - nsh + 1;
        nright = len + i - nsh;
      }
      at(i, nleft, nright);
    }
  }
  if (newnj !== 1) {
    for (let i = 1; i <= n - newnj; i += newnj) {
      const delta = (ys[ysOff + i + newnj] - ys[ysOff + i]) / newnj;
      for (let j = i + 1; j <= i + newnj - 1; j++) ys[ysOff + j] = ys[ysOff + i] + delta * (j - i);
    }
    const k = Math.trunc((n - 1) / newnj) * newnj + 1;
    if (k !== n) {
      at(n, nleft, nright);
      if (k !== n - 1) {
        const delta = (ys[ysOff + n] - ys[ysOff + k]) / (n - k);
        for (let j = k + 1; j <= n - 1; j++) ys[ysOff + j] = ys[ysOff + k] + delta * (j - k);
      }
    }
  }
}

/** Running mean of length len over x[1..n] into out[1..n-len+1]. */
function movingAverage(x: Float64Array, n: number, len: number, out: Float64Array): void {
  const newn = n - len + 1;
  let v = 0;
  for (let i = 1; i <= len; i++) v += x[i];
  out[1] = v / len;
  for (let j = 2, k = len, m = 0; j <= newn; j++) {
    k++;
    m++;
    v = v - x[m] + x[k];
    out[j] = v / len;
  }
}

export interface StlResult {
  readonly seasonal: Float64Array;
  readonly trend: Float64Array;
  readonly remainder: Float64Array;
}

export interface StlOptions {
  /** Seasonal smoothing window (odd, at least 3 after rounding up). */
  readonly seasonalWindow: number;
  /** Whose defaults fill the other windows and the jumps: R's stats::stl or statsmodels' STL. */
  readonly defaults: 'r' | 'statsmodels';
}

/** STL with a seasonal window and seasonal degree 0, the rest from R's or statsmodels' defaults. Needs n > 2 * period. */
export function stl(x: ArrayLike<number>, period: number, options: StlOptions): StlResult {
  const n = x.length;
  if (period < 2 || n <= 2 * period) throw new Error('series is not periodic or has less than two periods');
  const sWindow = options.seasonalWindow;
  const r = options.defaults === 'r';
  const tWindow = nextOdd(Math.ceil((1.5 * period) / (1 - 1.5 / sWindow)));
  // R: the period made odd; statsmodels: period + 1 made odd (always above the period).
  const lWindow = r ? nextOdd(period) : nextOdd(period + 1);
  const jump = (window: number) => (r ? Math.ceil(window / 10) : 1);
  const sJump = jump(sWindow);
  const tJump = jump(tWindow);
  const lJump = jump(lWindow);
  const toOdd3 = (v: number) => {
    let w = Math.max(3, v);
    if (w % 2 === 0) w++;
    return w;
  };
  const ns = toOdd3(sWindow);
  const nt = toOdd3(tWindow);
  const nl = toOdd3(lWindow);
  const np = Math.max(2, period);
  const sDeg = 0;
  const tDeg = 1;
  const lDeg = 1;

  const y = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) y[i + 1] = x[i];
  const trend = new Float64Array(n + 1);
  const season = new Float64Array(n + 1);
  const len = n + 2 * np;
  // Five work columns of length n + 2 np, 1-based.
  const w1 = new Float64Array(len + 1);
  const w2 = new Float64Array(len + 1);
  const w3 = new Float64Array(len + 1);
  const w4 = new Float64Array(len + 1);
  const w5 = new Float64Array(len + 1);
  const weights = new Float64Array(len + 1);

  // The inner loop's passes: R runs 2 when not robust, statsmodels' fit() 5.
  const passes = r ? 2 : 5;
  for (let pass = 0; pass < passes; pass++) {
    for (let i = 1; i <= n; i++) w1[i] = y[i] - trend[i];
    // Cycle-subseries smoothing, each subseries extended one period at both ends, into w2.
    for (let j = 1; j <= np; j++) {
      const k = Math.trunc((n - j) / np) + 1;
      for (let i = 1; i <= k; i++) w3[i] = w1[(i - 1) * np + j];
      // Smooth into w4[2..k+1], then extrapolate to 1 and k + 2.
      loessSmooth(w3, 0, k, ns, sDeg, sJump, null, 0, w4, 1, w5);
      let v = loessPoint(w3, 0, k, ns, sDeg, 0, 1, Math.min(ns, k), w5, null, 0);
      w4[1] = Number.isNaN(v) ? w4[2] : v;
      v = loessPoint(w3, 0, k, ns, sDeg, k + 1, Math.max(1, k - ns + 1), k, w5, null, 0);
      w4[k + 2] = Number.isNaN(v) ? w4[k + 1] : v;
      for (let m = 1; m <= k + 2; m++) w2[(m - 1) * np + j] = w4[m];
    }
    // Low-pass filter of the cycle-subseries: three moving averages then loess, into w1.
    movingAverage(w2, len, np, w3);
    movingAverage(w3, len - np + 1, np, w1);
    movingAverage(w1, len - 2 * np + 2, 3, w3);
    loessSmooth(w3, 0, n, nl, lDeg, lJump, null, 0, w1, 0, weights);
    for (let i = 1; i <= n; i++) season[i] = w2[np + i] - w1[i];
    for (let i = 1; i <= n; i++) w1[i] = y[i] - season[i];
    loessSmooth(w1, 0, n, nt, tDeg, tJump, null, 0, trend, 0, weights);
  }
  const seasonal = season.slice(1);
  const tr = trend.slice(1);
  const remainder = new Float64Array(n);
  for (let i = 0; i < n; i++) remainder[i] = x[i] - seasonal[i] - tr[i];
  return { seasonal, trend: tr, remainder };
}
