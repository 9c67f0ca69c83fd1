/**
 * Fitting one ETS structure by maximum likelihood, as R's `etsmodel`: Nelder-Mead over the
 * smoothing parameters and the initial states jointly, starting from `initparam`/`initstate`,
 * with the objective set to +Inf outside the usual-and-admissible region.
 */
import { initialState } from './initial-states.ts';
import { nelderMead, NonFiniteStartError, R_NELDER_MEAD, type NelderMeadOptions } from './r-nelder-mead.ts';
import { ETS_BOUNDS, inUsualRegion, isAdmissible, startingValues, type Bounds, type Estimated } from './parameters.ts';
import { finalState, runRecursion, Workspace, type Recursion } from './ets-state-space.ts';
import * as kinds from './ets-types.ts';
import { specName, type EtsFit, type EtsSpec } from './ets-types.ts';

// Module-local copies: imported bindings can compile to getter calls inside the objective.
const NONE: number = kinds.NONE;
const MULTIPLICATIVE: number = kinds.MULTIPLICATIVE;

/** Perfect fits make log(SSE) = -Inf; R floors the objective here so the simplex stays ordered. */
const LIK_FLOOR = -1e10;

/**
 * Unpacks a parameter vector `[alpha, beta?, gamma?, phi?, l0, b0?, s0..s(m-2)]` into the
 * recursion and the ring buffer. The last seasonal index is implied: the m indices sum to 0
 * (additive) or m (multiplicative). Returns false when a multiplicative index is negative.
 */
export function loadVector(x: ArrayLike<number>, rec: Recursion, est: Estimated, ws: Workspace): boolean {
  let k = 0;
  rec.alpha = x[k++];
  if (est.beta) rec.beta = x[k++];
  if (est.gamma) rec.gamma = x[k++];
  if (est.phi) rec.phi = x[k++];
  // Level/slope are read by the caller at fixed offsets; here only seasons matter.
  if (rec.season === NONE) return true;
  const first = k + 1 + (rec.trend === NONE ? 0 : 1);
  const m = rec.m;
  const seasons = ws.seasons;
  let sum = 0;
  for (let j = 0; j < m - 1; j++) sum += x[first + j];
  const implied = (rec.season === MULTIPLICATIVE ? m : 0) - sum;
  // Ring order: the index for the first observation (the implied one) comes first.
  seasons[0] = implied;
  for (let j = 1; j < m; j++) seasons[j] = x[first + m - 1 - j];
  if (rec.season === MULTIPLICATIVE) {
    for (let j = 0; j < m; j++) if (seasons[j] < 0) return false;
  }
  return true;
}

/**
 * Fits `spec` to `y` (seasonal period `m`, used only when the spec is seasonal). Returns null
 * where R's `etsmodel` fails or declines (too many parameters for the data, starting values
 * outside the region, non-finite likelihood at the start); R's `ets()` then skips the candidate.
 */
export function fitEts(y: Float64Array, spec: EtsSpec, m: number, bounds: Bounds = ETS_BOUNDS, nm: NelderMeadOptions = R_NELDER_MEAD): EtsFit | null {
  const n = y.length;
  const seasonal = spec.season !== NONE;
  const period = seasonal ? m : 1;
  const est: Estimated = { beta: spec.trend !== NONE, gamma: seasonal, phi: spec.damped };
  const start = startingValues(est, period, bounds);

  const rec: Recursion = {
    error: spec.error,
    trend: spec.trend,
    season: spec.season,
    m: period,
    alpha: start[0],
    beta: 0,
    gamma: 0,
    phi: 1,
  };
  const admissible = (): boolean =>
    inUsualRegion(rec.alpha, rec.beta, rec.gamma, rec.phi, est, bounds) && isAdmissible(rec.alpha, rec.beta, rec.gamma, rec.phi, period, est.beta, seasonal);

  const ws = new Workspace(period);
  loadVector(start, rec, est, ws);
  if (!admissible()) return null;

  const init = initialState(y, spec.trend, spec.season, m);
  if (!init) return null;
  const x0 = [...start, ...init];
  const nPar = x0.length;
  if (nPar >= n - 1) return null;

  const levelAt = start.length;
  const slopeAt = levelAt + 1;
  const objective = (x: Float64Array): number => {
    if (!loadVector(x, rec, est, ws) || !admissible()) return Infinity;
    const lik = runRecursion(y, rec, x[levelAt], spec.trend === NONE ? 0 : x[slopeAt], ws);
    if (Number.isNaN(lik)) return Infinity;
    return lik < LIK_FLOOR ? LIK_FLOOR : lik;
  };

  let best: Float64Array;
  try {
    best = nelderMead(objective, x0, nm).x;
  } catch (err) {
    if (err instanceof NonFiniteStartError) return null;
    throw err;
  }

  // Re-run at the optimum for the unfloored likelihood and the final states.
  loadVector(best, rec, est, ws);
  const lik = runRecursion(y, rec, best[levelAt], spec.trend === NONE ? 0 : best[slopeAt], ws);
  return fitFrom(spec, rec, ws, lik, n, nPar, n - nPar);
}

/**
 * The fit left in `rec` and `ws` by a pass at the optimum: its AICc counts the `nPar` estimated
 * values and the innovation variance; `sigmaDf` is the residual variance's denominator (R: n minus
 * the estimated values; statsforecast: one less again).
 */
export function fitFrom(spec: EtsSpec, rec: Recursion, ws: Workspace, lik: number, n: number, nPar: number, sigmaDf: number): EtsFit {
  const k = nPar + 1; // + the innovation variance
  return {
    spec,
    m: rec.m,
    params: { alpha: rec.alpha, beta: rec.beta, gamma: rec.gamma, phi: rec.phi },
    lastState: finalState(ws, rec),
    sigma2: ws.sse / sigmaDf,
    lik,
    aicc: lik + 2 * k + (2 * k * (k + 1)) / (n - k - 1),
    method: specName(spec),
  };
}
