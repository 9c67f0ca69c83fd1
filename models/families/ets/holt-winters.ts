/**
 * The fallbacks R's `ets()` uses when a series is too short for likelihood estimation (or constant):
 * Holt-Winters smoothing with the first observations as initial states and the parameters chosen
 * by least squares (R's `HoltWintersZZ`, non-seasonal branch), reported as ETS(A,N,N) or ETS(A,A,N)
 * so that the class 1 forecast formulas apply, as R then forecasts it. R's Holt beta (the
 * Holt-Winters one) goes into the ETS variance formulas unchanged, as in R.
 */
import { minimizeInBox } from './bounded-minimize.ts';
import { ADDITIVE, NONE, specName, type EtsFit, type EtsSpec } from './ets-types.ts';

interface SmoothResult {
  sse: number;
  level: number;
  slope: number;
}

/** One pass of additive Holt (or simple, when `trend` is false) smoothing from l0 = y1, b0 = y2 - y1. */
function smooth(y: Float64Array, alpha: number, beta: number, trend: boolean): SmoothResult {
  let l = y[0];
  let b = trend ? y[1] - y[0] : 0;
  const betaUsed = trend ? beta : 0;
  let sse = 0;
  for (let i = 0; i < y.length; i++) {
    const res = y[i] - (l + b);
    sse += res * res;
    const level = alpha * y[i] + (1 - alpha) * (l + b);
    b = betaUsed * (level - l) + (1 - betaUsed) * b;
    l = level;
  }
  return { sse, level: l, slope: b };
}

/**
 * Least-squares exponential smoothing. With `fixedAlpha` nothing is optimised (R's
 * `ses(initial = "simple")` route for constant series). `m` is the series' frequency: R derives
 * the starting values from it even though the fit is non-seasonal.
 * Returns null where R's Holt-Winters fails (a trend needs two observations).
 */
export function fitSmoothing(y: Float64Array, trend: boolean, m: number, fixedAlpha?: number): EtsFit | null {
  const n = y.length;
  if (trend && n < 2) return null;
  let alpha: number;
  let beta = 0;
  if (fixedAlpha !== undefined) {
    alpha = fixedAlpha;
  } else {
    // R's initparam with bounds [0, 1]: alpha = 0.2/m, beta = 0.1 alpha.
    const a0 = 0.2 / m;
    const start = trend ? [a0, 0.1 * Math.min(1, a0)] : [a0];
    const lower = start.map(() => 0);
    const upper = start.map(() => 1);
    const sol = minimizeInBox((p) => smooth(y, p[0], trend ? p[1] : 0, trend).sse, start, lower, upper);
    if (!Number.isFinite(sol.value)) return null;
    alpha = sol.x[0];
    if (trend) beta = sol.x[1];
  }
  const res = smooth(y, alpha, beta, trend);
  const spec: EtsSpec = { error: ADDITIVE, trend: trend ? ADDITIVE : NONE, season: NONE, damped: false };
  return {
    spec,
    m: 1,
    params: { alpha, beta, gamma: 0, phi: 1 },
    lastState: trend ? Float64Array.of(res.level, res.slope) : Float64Array.of(res.level),
    // R divides by n here (not n minus the parameter count as for likelihood fits).
    sigma2: res.sse / n,
    lik: Number.NaN,
    aicc: Number.NaN,
    method: specName(spec),
  };
}
