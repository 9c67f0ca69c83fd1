/**
 * Box-constrained minimisation for the one- and two-parameter sum-of-squares problems of the
 * short-series fallback, in the manner of R's `optim(method = "L-BFGS-B")` with its default
 * controls: central-difference gradients (step 1e-3, one-sided at a bound), a first step to the
 * projection of x - g, then projected quasi-Newton steps until the relative reduction falls below
 * factr * epsilon. Not a port: on these small smooth problems it lands in R's local minimum.
 */

export interface BoxResult {
  readonly x: Float64Array;
  readonly value: number;
}

const NDEPS = 1e-3;
const FACTR = 1e7;
const MAXIT = 100;

function gradient(fn: (x: Float64Array) => number, x: Float64Array, lower: ArrayLike<number>, upper: ArrayLike<number>): Float64Array {
  const g = new Float64Array(x.length);
  const probe = Float64Array.from(x);
  for (let i = 0; i < x.length; i++) {
    const hi = Math.min(x[i] + NDEPS, upper[i]);
    const lo = Math.max(x[i] - NDEPS, lower[i]);
    probe[i] = hi;
    const fHi = fn(probe);
    probe[i] = lo;
    const fLo = fn(probe);
    probe[i] = x[i];
    g[i] = (fHi - fLo) / (hi - lo);
  }
  return g;
}

export function minimizeInBox(fn: (x: Float64Array) => number, start: ArrayLike<number>, lower: ArrayLike<number>, upper: ArrayLike<number>): BoxResult {
  const n = start.length;
  const clamp = (v: number, i: number): number => Math.min(upper[i], Math.max(lower[i], v));
  let x: Float64Array = Float64Array.from(start, clamp);
  let f = fn(x);
  let g: Float64Array = gradient(fn, x, lower, upper);
  // Inverse Hessian approximation, row-major n x n; identity until curvature is learnt.
  let H = new Float64Array(n * n);
  const resetH = (): void => {
    H = new Float64Array(n * n);
    for (let i = 0; i < n; i++) H[i * n + i] = 1;
  };
  resetH();

  // Tries a step along d (to the projection of x + d, halving until the decrease is sufficient).
  const lineSearch = (d: Float64Array): { x: Float64Array; f: number } | null => {
    const target = Float64Array.from(x, (xi, i) => clamp(xi + d[i], i));
    let t = 1;
    let next = target;
    for (let k = 0; k < 50; k++) {
      const fNext = fn(next);
      let descent = 0;
      for (let i = 0; i < n; i++) descent += g[i] * (next[i] - x[i]);
      if (descent < 0 && fNext <= f + 1e-4 * descent) return { x: next, f: fNext };
      t /= 2;
      next = Float64Array.from(x, (xi, i) => xi + t * (target[i] - xi));
    }
    return null;
  };
  let steepest = true;

  for (let iter = 0; iter < MAXIT; iter++) {
    // Variables pinned at a bound with the gradient pushing outwards stay put.
    const free = Array.from(x, (xi, i) => !((xi <= lower[i] && g[i] > 0) || (xi >= upper[i] && g[i] < 0)));
    const d = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (!free[i]) continue;
      let s = 0;
      for (let j = 0; j < n; j++) if (free[j]) s -= H[i * n + j] * g[j];
      d[i] = s;
    }
    let step = lineSearch(d);
    if (!step && !steepest) {
      // The curvature model misleads (typically after hitting a bound): restart from the gradient.
      resetH();
      steepest = true;
      step = lineSearch(Float64Array.from(g, (gi, i) => (free[i] ? -gi : 0)));
    }
    if (!step) break;
    const gNext = gradient(fn, step.x, lower, upper);
    const s = Float64Array.from(step.x, (v, i) => v - x[i]);
    const y = Float64Array.from(gNext, (v, i) => v - g[i]);
    let sy = 0;
    let yy = 0;
    for (let i = 0; i < n; i++) {
      sy += s[i] * y[i];
      yy += y[i] * y[i];
    }
    const wasSteepest = steepest;
    steepest = false;
    if (sy > Number.EPSILON * yy) {
      if (wasSteepest) {
        // Scale the identity to the observed curvature before the first update (Shanno-Phua).
        for (let i = 0; i < n; i++) H[i * n + i] = sy / yy;
      }
      // BFGS update of the inverse Hessian.
      const Hy = new Float64Array(n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) Hy[i] += H[i * n + j] * y[j];
      let yHy = 0;
      for (let i = 0; i < n; i++) yHy += y[i] * Hy[i];
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          H[i * n + j] += ((sy + yHy) * s[i] * s[j]) / (sy * sy) - (Hy[i] * s[j] + s[i] * Hy[j]) / sy;
        }
      }
    } else {
      resetH();
      steepest = true;
    }
    const reduction = (f - step.f) / Math.max(Math.abs(f), Math.abs(step.f), 1);
    x = step.x;
    f = step.f;
    g = gNext;
    if (reduction <= FACTR * Number.EPSILON) {
      // Only a gradient step that cannot do better ends the search; a poor quasi-Newton step
      // just restarts the curvature model.
      if (wasSteepest) break;
      resetH();
      steepest = true;
    }
  }
  return { x, value: f };
}
