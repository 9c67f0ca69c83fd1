/**
 * Variable-metric (BFGS) minimiser with central-difference gradients, as R's optim(method = "BFGS")
 * runs J.C. Nash's algorithm 21: backtracking line search (step x0.2, Armijo constant 1e-4), update
 * skipped when the curvature condition fails, restart every 2n gradients, stop on a relative change
 * below reltol. Parameters are scaled by `parscale`, and ndeps applies in that space, as in optim.
 * The same rules matter: the search compares models by where this optimiser stops.
 */

export class OptimError extends Error {
  override readonly name = 'OptimError';
}

export interface OptimOptions {
  readonly parscale?: ArrayLike<number>;
  readonly maxit?: number;
  readonly reltol?: number;
  readonly abstol?: number;
  readonly ndeps?: number;
  /**
   * The order in which a gradient's finite differences perturb the coordinates (default 0, 1,
   * ...). The differences do not depend on it; an objective that reuses work between points
   * differing in some coordinates only (ARIMA's AR part) lists the others first. The Hessian's
   * outer loop keeps index order (its steps move b by rounding).
   */
  readonly order?: ArrayLike<number>;
}

export interface OptimResult {
  readonly par: Float64Array;
  readonly value: number;
  /** 0 converged, 1 iteration limit reached. */
  readonly convergence: 0 | 1;
  readonly fnCount: number;
  readonly grCount: number;
}

const STEP_SHRINK = 0.2;
const ACCEPT = 1e-4;
const SAME = 10.0;

type Objective = (par: Float64Array) => number;

/** The objective in scaled coordinates, with its central-difference gradient. */
class Scaled {
  private readonly x: Float64Array;
  readonly order: Int32Array;
  constructor(
    private readonly fn: Objective,
    readonly scale: Float64Array,
    private readonly ndeps: number,
    order: ArrayLike<number> | undefined,
  ) {
    this.x = new Float64Array(scale.length);
    this.order = coordinateOrder(scale.length, order);
  }

  value(b: Float64Array): number {
    const n = b.length;
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(b[i])) throw new OptimError('non-finite value supplied by optim');
      this.x[i] = b[i] * this.scale[i];
    }
    return this.fn(this.x);
  }

  gradient(b: Float64Array, g: Float64Array): void {
    const n = b.length;
    const x = this.x;
    const eps = this.ndeps;
    for (let i = 0; i < n; i++) x[i] = b[i] * this.scale[i];
    for (let k = 0; k < n; k++) {
      const i = this.order[k];
      x[i] = (b[i] + eps) * this.scale[i];
      const v1 = this.fn(x);
      x[i] = (b[i] - eps) * this.scale[i];
      const v2 = this.fn(x);
      g[i] = (v1 - v2) / (2 * eps);
      x[i] = b[i] * this.scale[i];
    }
    // As optim, name the first coordinate (in index order) whose difference is not finite.
    for (let i = 0; i < n; i++) if (!Number.isFinite(g[i])) throw new OptimError(`non-finite finite-difference value [${i + 1}]`);
  }
}

function coordinateOrder(n: number, order: ArrayLike<number> | undefined): Int32Array {
  const out = Int32Array.from({ length: n }, (_, i) => i);
  if (order) {
    if (order.length !== n) throw new RangeError(`order lists ${order.length} coordinates, expected ${n}`);
    const seen = new Uint8Array(n);
    for (let k = 0; k < n; k++) {
      const i = order[k];
      if (!(i >= 0 && i < n) || seen[i]) throw new RangeError('order is not a permutation of the coordinates');
      seen[i] = 1;
      out[k] = i;
    }
  }
  return out;
}

function scaleOf(n: number, parscale: ArrayLike<number> | undefined): Float64Array {
  const s = new Float64Array(n);
  for (let i = 0; i < n; i++) s[i] = parscale ? parscale[i] : 1;
  return s;
}

/** Minimises fn from init. Throws OptimError where optim would stop with an error. */
export function minimizeBfgs(fn: Objective, init: ArrayLike<number>, opts: OptimOptions = {}): OptimResult {
  const n = init.length;
  const scale = scaleOf(n, opts.parscale);
  const maxit = opts.maxit ?? 100;
  const reltol = opts.reltol ?? Math.sqrt(Number.EPSILON);
  const abstol = opts.abstol ?? -Infinity;
  const obj = new Scaled(fn, scale, opts.ndeps ?? 1e-3, opts.order);
  const b = new Float64Array(n);
  for (let i = 0; i < n; i++) b[i] = init[i] / scale[i];

  const done = (fmin: number, fail: 0 | 1, fnCount: number, grCount: number): OptimResult => {
    const par = new Float64Array(n);
    for (let i = 0; i < n; i++) par[i] = b[i] * scale[i];
    return { par, value: fmin, convergence: fail, fnCount, grCount };
  };

  if (maxit <= 0) return done(obj.value(b), 0, 0, 0);

  const g = new Float64Array(n);
  const t = new Float64Array(n);
  const X = new Float64Array(n);
  const c = new Float64Array(n);
  // Lower triangle of the inverse-Hessian approximation, row-major B[i * n + j], j <= i.
  const B = new Float64Array(n * n);

  let f = obj.value(b);
  if (!Number.isFinite(f)) throw new OptimError("initial value in 'vmmin' is not finite");
  let fmin = f;
  let funcount = 1;
  let gradcount = 1;
  obj.gradient(b, g);
  let iter = 1;
  let ilast = gradcount;
  let count = 0;

  do {
    if (ilast === gradcount) {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < i; j++) B[i * n + j] = 0;
        B[i * n + i] = 1;
      }
    }
    for (let i = 0; i < n; i++) {
      X[i] = b[i];
      c[i] = g[i];
    }
    let gradproj = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j <= i; j++) s -= B[i * n + j] * g[j];
      for (let j = i + 1; j < n; j++) s -= B[j * n + i] * g[j];
      t[i] = s;
      gradproj += s * g[i];
    }

    if (gradproj < 0) {
      let steplength = 1.0;
      let accpoint = false;
      do {
        count = 0;
        for (let i = 0; i < n; i++) {
          b[i] = X[i] + steplength * t[i];
          if (SAME + X[i] === SAME + b[i]) count++;
        }
        if (count < n) {
          f = obj.value(b);
          funcount++;
          accpoint = Number.isFinite(f) && f <= fmin + gradproj * steplength * ACCEPT;
          if (!accpoint) steplength *= STEP_SHRINK;
        }
      } while (!(count === n || accpoint));
      const enough = f > abstol && Math.abs(f - fmin) > reltol * (Math.abs(fmin) + reltol);
      if (!enough) {
        count = n;
        fmin = f;
      }
      if (count < n) {
        fmin = f;
        obj.gradient(b, g);
        gradcount++;
        iter++;
        let D1 = 0;
        for (let i = 0; i < n; i++) {
          t[i] = steplength * t[i];
          c[i] = g[i] - c[i];
          D1 += t[i] * c[i];
        }
        if (D1 > 0) {
          let D2 = 0;
          for (let i = 0; i < n; i++) {
            let s = 0;
            for (let j = 0; j <= i; j++) s += B[i * n + j] * c[j];
            for (let j = i + 1; j < n; j++) s += B[j * n + i] * c[j];
            X[i] = s;
            D2 += s * c[i];
          }
          D2 = 1 + D2 / D1;
          for (let i = 0; i < n; i++) {
            for (let j = 0; j <= i; j++) B[i * n + j] += (D2 * t[i] * t[j] - X[i] * t[j] - t[i] * X[j]) / D1;
          }
        } else {
          ilast = gradcount;
        }
      } else if (ilast < gradcount) {
        count = 0;
        ilast = gradcount;
      }
    } else {
      count = 0;
      if (ilast === gradcount) count = n;
      else ilast = gradcount;
    }
    if (iter >= maxit) break;
    if (gradcount - ilast > 2 * n) ilast = gradcount;
  } while (count !== n || ilast !== gradcount);

  return done(fmin, iter < maxit ? 0 : 1, funcount, gradcount);
}

/**
 * Numerical Hessian at par as optimHess computes it: central differences of the
 * central-difference gradient, then symmetrised. Row-major n x n.
 */
export function numericHessian(fn: Objective, par: ArrayLike<number>, opts: OptimOptions = {}): Float64Array {
  const n = par.length;
  const scale = scaleOf(n, opts.parscale);
  const ndeps = opts.ndeps ?? 1e-3;
  const obj = new Scaled(fn, scale, ndeps, opts.order);
  const H = new Float64Array(n * n);
  const b = new Float64Array(n);
  for (let i = 0; i < n; i++) b[i] = par[i] / scale[i];
  const g1 = new Float64Array(n);
  const g2 = new Float64Array(n);
  // In index order: b[i] comes back from +eps then -2 eps then +eps only to rounding, as in optimHess.
  for (let i = 0; i < n; i++) {
    const eps = ndeps / scale[i];
    b[i] += eps;
    obj.gradient(b, g1);
    b[i] -= 2 * eps;
    obj.gradient(b, g2);
    for (let j = 0; j < n; j++) H[i * n + j] = (g1[j] - g2[j]) / (2 * eps * scale[i] * scale[j]);
    b[i] += eps;
  }
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < i; j++) {
      const v = 0.5 * (H[i * n + j] + H[j * n + i]);
      H[i * n + j] = v;
      H[j * n + i] = v;
    }
  }
  return H;
}
