/**
 * Fitting one ETS structure as statsforecast's AutoETS does (its `etsmodel`): R's starting values
 * and initial states, but a different search. Nelder-Mead runs inside a box (trial points clamped,
 * no admissibility test inside the objective), with adaptive coefficients, at most 1,000 iterations
 * and a stop once the simplex's values agree within 1e-4. Its box caps beta and gamma by the
 * starting alphas (SharedUpperBounds). Why it is the default: docs/decisions/008-aets-estimates-as-statsforecast.md.
 */
import { nelderMead } from '../../numerics/bounded-nelder-mead.ts';
import { initialState } from './initial-states.ts';
import { ETS_BOUNDS, inUsualRegion, isAdmissible, startingValues, type Bounds, type Estimated } from './parameters.ts';
import { fitFrom, loadVector } from './r-estimation.ts';
import { runRecursion, Workspace, type Recursion } from './ets-state-space.ts';
import { NONE, type EtsFit, type EtsSpec } from './ets-types.ts';

/** statsforecast's optimiser controls for ETS. */
const MAX_ITERATIONS = 1000;
const TOLERANCE = 1e-4;
const LIK_FLOOR = -1e10;

/**
 * The smoothing parameters' upper bounds, which statsforecast narrows in place as it goes through
 * the candidates of one series (its `initparam` writes into the array the search shares): each
 * candidate's cap on beta is the smallest starting alpha seen so far among trended candidates,
 * on gamma one minus the smallest seasonal starting alpha. Created once per series.
 */
export class SharedUpperBounds {
  beta = ETS_BOUNDS.upper[1];
  gamma = ETS_BOUNDS.upper[2];
}

/**
 * Fits `spec` to `y` (period `m`, used when the spec is seasonal), the likelihood alone as the
 * objective (no admissibility test inside it). Null where statsforecast's
 * `etsmodel` gives no model: starting values outside the region, too many parameters for the
 * data, or a likelihood that is not a number at the optimum.
 */
export function fitEtsBounded(y: Float64Array, spec: EtsSpec, m: number, shared: SharedUpperBounds): EtsFit | null {
  const n = y.length;
  const seasonal = spec.season !== NONE;
  const period = seasonal ? m : 1;
  const est: Estimated = { beta: spec.trend !== NONE, gamma: seasonal, phi: spec.damped };
  const { lower, upper } = ETS_BOUNDS;
  const alpha0 = startingValues({ beta: false, gamma: false, phi: false }, period, ETS_BOUNDS)[0];
  if (est.beta) shared.beta = Math.min(shared.beta, alpha0);
  if (est.gamma) shared.gamma = Math.min(shared.gamma, 1 - alpha0);
  const box: Bounds = { lower, upper: [upper[0], shared.beta, shared.gamma, upper[3]] };
  const start = startingValues(est, period, box);

  const rec: Recursion = { error: spec.error, trend: spec.trend, season: spec.season, m: period, alpha: 0, beta: 0, gamma: 0, phi: 1 };
  const ws = new Workspace(period);
  // The starting values must lie in the usual box and the admissible region (check_param).
  loadVector(start, rec, est, ws);
  if (!inUsualRegion(rec.alpha, rec.beta, rec.gamma, rec.phi, est, box)) return null;
  if (!isAdmissible(rec.alpha, rec.beta, rec.gamma, rec.phi, period, est.beta, seasonal)) return null;

  const init = initialState(y, spec.trend, spec.season, m);
  if (!init) return null;
  const x0 = Float64Array.from([...start, ...init]);
  const nPar = x0.length;
  if (nPar >= n - 1) return null;

  // The smoothing parameters in the box, in the vector's order; the initial states unbounded.
  const boxLower = new Float64Array(nPar).fill(-Infinity);
  const boxUpper = new Float64Array(nPar).fill(Infinity);
  const estimated = [0, ...(est.beta ? [1] : []), ...(est.gamma ? [2] : []), ...(est.phi ? [3] : [])];
  estimated.forEach((parameter, k) => {
    boxLower[k] = box.lower[parameter];
    boxUpper[k] = box.upper[parameter];
  });

  const levelAt = start.length;
  const evaluate = (x: Float64Array): number => {
    if (!loadVector(x, rec, est, ws)) return Infinity;
    return runRecursion(y, rec, x[levelAt], spec.trend === NONE ? 0 : x[levelAt + 1], ws);
  };
  const objective = (x: Float64Array): number => {
    const lik = evaluate(x);
    // The reference maps a likelihood that is not a number to -Inf (its kernel's missing value).
    if (Number.isNaN(lik)) return -Infinity;
    return lik < LIK_FLOOR ? LIK_FLOOR : lik;
  };

  const best = nelderMead(objective, x0, { lower: boxLower, upper: boxUpper, maxIter: MAX_ITERATIONS, tolStd: TOLERANCE }).x;
  const lik = evaluate(best);
  if (!Number.isFinite(lik)) return null;
  // statsforecast's residual variance counts the variance itself among the parameters.
  return fitFrom(spec, rec, ws, lik, n, nPar, n - nPar - 2);
}
