/**
 * Smoothing-parameter bounds, starting values and the admissible region of R's `ets()` with
 * bounds = "both": a parameter vector must lie in the "usual" box (0 < beta <= alpha,
 * 0 < gamma <= 1 - alpha, ...) AND make the model forecastable (Hyndman et al. 2008, ch. 10),
 * i.e. the roots of the characteristic polynomial lie inside the unit circle.
 */
import { rootsWithin } from './stability.ts';

/** R's defaults: lower = c(1e-4, 1e-4, 1e-4, 0.8), upper = c(0.9999, 0.9999, 0.9999, 0.98). */
export interface Bounds {
  readonly lower: readonly [number, number, number, number];
  readonly upper: readonly [number, number, number, number];
}

export const ETS_BOUNDS: Bounds = {
  lower: [1e-4, 1e-4, 1e-4, 0.8],
  upper: [0.9999, 0.9999, 0.9999, 0.98],
};

/** Which smoothing parameters a structure estimates. */
export interface Estimated {
  readonly beta: boolean;
  readonly gamma: boolean;
  readonly phi: boolean;
}

/**
 * R's `initparam`: starting values, spread in proportion to the bounds, with alpha shrunk by the
 * seasonal period so that long seasons start with slowly moving levels. Order alpha, beta?,
 * gamma?, phi? (the optimiser's parameter order).
 */
export function startingValues(est: Estimated, m: number, bounds: Bounds): number[] {
  const { lower, upper } = bounds;
  let alpha = lower[0] + (0.2 * (upper[0] - lower[0])) / m;
  if (alpha > 1 || alpha < 0) alpha = lower[0] + 0.002;
  const par = [alpha];
  if (est.beta) {
    const up = Math.min(upper[1], alpha);
    let beta = lower[1] + 0.1 * (up - lower[1]);
    if (beta < 0 || beta > alpha) beta = alpha - 0.001;
    par.push(beta);
  }
  if (est.gamma) {
    const up = Math.min(upper[2], 1 - alpha);
    let gamma = lower[2] + 0.05 * (up - lower[2]);
    if (gamma < 0 || gamma > 1 - alpha) gamma = 1 - alpha - 0.001;
    par.push(gamma);
  }
  if (est.phi) {
    let phi = lower[3] + 0.99 * (upper[3] - lower[3]);
    if (phi < 0 || phi > 1) phi = upper[3] - 0.001;
    par.push(phi);
  }
  return par;
}

/** The "usual" region: each parameter in its box, beta <= alpha, gamma <= 1 - alpha. */
export function inUsualRegion(alpha: number, beta: number, gamma: number, phi: number, est: Estimated, bounds: Bounds): boolean {
  const { lower, upper } = bounds;
  if (alpha < lower[0] || alpha > upper[0]) return false;
  if (est.beta && (beta < lower[1] || beta > alpha || beta > upper[1])) return false;
  if (est.phi && (phi < lower[3] || phi > upper[3])) return false;
  if (est.gamma && (gamma < lower[2] || gamma > 1 - alpha || gamma > upper[2])) return false;
  return true;
}

let poly = new Float64Array(32);

/**
 * The admissible (forecastable) region. Non-seasonal models have closed-form conditions;
 * seasonal ones need every root of
 *   z^(m+1) + (a+b-phi) z^m + (a+b-a phi)(z^(m-1) + ... + z^2) + (a+b-a phi+g-1) z + phi(1-a-g)
 * within 1 + 1e-10 of the unit circle, as R tests. beta = 0 without a trend, phi = 1 undamped.
 */
export function isAdmissible(alpha: number, beta: number, gamma: number, phi: number, m: number, hasTrend: boolean, seasonal: boolean): boolean {
  if (phi < 0 || phi > 1 + 1e-8) return false;
  if (!seasonal) {
    if (alpha < 1 - 1 / phi || alpha > 1 + 1 / phi) return false;
    if (hasTrend && (beta < alpha * (phi - 1) || beta > (1 + phi) * (2 - alpha))) return false;
    return true;
  }
  if (m <= 1) return true;
  const b = hasTrend ? beta : 0;
  const d = 1 - 1 / phi - alpha;
  if (gamma < (d > 0 ? d : 0) || gamma > 1 + 1 / phi - alpha) return false;
  if (alpha < 1 - 1 / phi - (gamma * (1 - m + phi + phi * m)) / (2 * phi * m)) return false;
  if (b < -(1 - phi) * (gamma / m + alpha)) return false;

  const degree = m + 1;
  if (poly.length < degree + 1) poly = new Float64Array(2 * (degree + 1));
  poly[0] = phi * (1 - alpha - gamma);
  poly[1] = alpha + b - alpha * phi + gamma - 1;
  const middle = alpha + b - alpha * phi;
  for (let i = 2; i < m; i++) poly[i] = middle;
  poly[m] = alpha + b - phi;
  poly[m + 1] = 1;

  if (b === 0 && phi === 1) {
    // Without trend the polynomial always has the root z = 1 (its coefficients sum to 0), which
    // R accepts as within tolerance; divide it out so the strict test judges only the others.
    let carry = poly[degree];
    for (let i = degree - 1; i >= 0; i--) {
      const c = poly[i];
      poly[i] = carry;
      carry = c + carry;
    }
    return rootsWithin(poly, degree - 1, 1 + 1e-10);
  }
  return rootsWithin(poly, degree, 1 + 1e-10);
}
