import type { HierarchyStructure } from './hierarchy-structure.ts';
import { ReconciliationError } from './reconciliation-error.ts';

/**
 * min_trace's weight matrix W (the base forecast errors' covariance, up to a factor), never held
 * as an n x n matrix: W = diag(diagonal) + scale * X X', with X the centred in-sample residuals
 * (n x T, row-major, structure rows). Every estimator fits this form: ols, wls_struct and wls_var
 * are diagonal (scale 0); mint_cov is X X' / (T - 1); mint_shrink shrinks mint_cov's off-diagonal
 * entries by one factor and keeps its diagonal, so it is a diagonal plus the same low-rank term.
 * The estimators follow hierarchicalforecast's MinTrace (docs/decisions/051-min-trace-without-dense-matrices.md).
 */

export const MIN_TRACE_ESTIMATORS = ['ols', 'wls_struct', 'wls_var', 'mint_shrink', 'mint_cov'] as const;
export type MinTraceEstimator = (typeof MIN_TRACE_ESTIMATORS)[number];

export interface WeightMatrix {
  readonly diagonal: Float64Array;
  /** 0 when W is diagonal. */
  readonly scale: number;
  /** Centred residuals, n x T row-major; empty when scale is 0. */
  readonly factor: Float64Array;
  readonly observations: number;
}

/** hierarchicalforecast's floor on wls_var's variances, and mint_shrink's default ridge. */
const VARIANCE_FLOOR = 2e-8;
/** The Schäfer–Strimmer estimate's guard against dividing by a zero standard deviation. */
const EPSILON = 2e-8;

/** Fewest residuals per series each estimator reads: a variance needs two, a correlation's variance three. */
export const MIN_OBSERVATIONS: Readonly<Record<MinTraceEstimator, number>> = { ols: 0, wls_struct: 0, wls_var: 2, mint_shrink: 3, mint_cov: 3 };

/**
 * The estimator's W. `residuals` (n x T row-major, structure rows, finite) is read by wls_var,
 * mint_shrink and mint_cov only.
 */
export function minTraceWeights(
  structure: HierarchyStructure,
  estimator: MinTraceEstimator,
  residuals: Float64Array | null,
  observations: number,
  ridge = VARIANCE_FLOOR,
): WeightMatrix {
  const n = structure.rowCount;
  const diagonal = new Float64Array(n);
  const none = { diagonal, scale: 0, factor: new Float64Array(0), observations: 0 };
  if (estimator === 'ols') return { ...none, diagonal: diagonal.fill(1) };
  if (estimator === 'wls_struct') {
    for (let j = 0; j < structure.aggregateCount; j++) diagonal[j] = structure.memberStart[j + 1] - structure.memberStart[j];
    diagonal.fill(1, structure.aggregateCount);
    return { ...none, diagonal };
  }
  const needed = MIN_OBSERVATIONS[estimator];
  if (residuals === null || observations < needed) {
    const had = residuals === null ? 'none were given' : `got ${observations}`;
    throw new ReconciliationError('too_few_observations', `min_trace with ${estimator} needs at least ${needed} in-sample residuals per series; ${had}`, [
      'estimator',
    ]);
  }
  const T = observations;
  if (estimator === 'wls_var') {
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let t = 0; t < T; t++) s += residuals[i * T + t] ** 2;
      diagonal[i] = s / T + VARIANCE_FLOOR;
    }
    return { ...none, diagonal };
  }
  const factor = centred(residuals, n, T);
  if (estimator === 'mint_cov') return { diagonal, scale: 1 / (T - 1), factor, observations: T };
  const keep = offDiagonalShare(factor, n, T);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let t = 0; t < T; t++) s += factor[i * T + t] ** 2;
    const variance = s / (T - 1);
    // W's diagonal is the sample variance (floored by the ridge); the low-rank term adds keep * variance back.
    diagonal[i] = Math.max(variance, ridge) - keep * variance;
  }
  return { diagonal, scale: keep / (T - 1), factor, observations: T };
}

function centred(residuals: Float64Array, n: number, T: number): Float64Array {
  const out = new Float64Array(n * T);
  for (let i = 0; i < n; i++) {
    let mean = 0;
    for (let t = 0; t < T; t++) mean += residuals[i * T + t];
    mean /= T;
    for (let t = 0; t < T; t++) out[i * T + t] = residuals[i * T + t] - mean;
  }
  return out;
}

/**
 * The share of the sample covariances kept off the diagonal: one minus the Schäfer–Strimmer
 * shrinkage intensity toward the diagonal, as hierarchicalforecast estimates it. Its sums run over
 * every pair of series; written with the T x T cross-product of the standardised residuals, they
 * cost n T^2 instead of n^2 T.
 */
function offDiagonalShare(X: Float64Array, n: number, T: number): number {
  const z = new Float64Array(n * T);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let t = 0; t < T; t++) s += X[i * T + t] ** 2;
    const inverseSd = 1 / (Math.sqrt(s / T) + EPSILON);
    for (let t = 0; t < T; t++) z[i * T + t] = X[i * T + t] * inverseSd;
  }
  // Pairs i != j: sum_k z_ik^2 z_jk^2, and sum of w_ij^2 with w_ij = mean_k z_ik z_jk.
  const squares = new Float64Array(T);
  const cross = new Float64Array(T * T);
  let fourth = 0;
  let diagonalW = 0;
  for (let i = 0; i < n; i++) {
    let wii = 0;
    for (let k = 0; k < T; k++) {
      const v = z[i * T + k];
      const v2 = v * v;
      squares[k] += v2;
      fourth += v2 * v2;
      wii += v2;
      const row = k * T;
      for (let l = k; l < T; l++) cross[row + l] += v * z[i * T + l];
    }
    diagonalW += (wii / T) ** 2;
  }
  let productSquares = 0;
  for (let k = 0; k < T; k++) productSquares += squares[k] * squares[k];
  let crossSquares = 0;
  for (let k = 0; k < T; k++) {
    crossSquares += cross[k * T + k] ** 2;
    for (let l = k + 1; l < T; l++) crossSquares += 2 * cross[k * T + l] ** 2;
  }
  const pairProducts = (productSquares - fourth) / 2;
  const pairW2 = (crossSquares / (T * T) - diagonalW) / 2;
  const varianceSum = pairProducts - T * pairW2;
  const intensity = Math.min(1, Math.max(0, varianceSum / (T * (T - 1)) / (pairW2 + EPSILON)));
  return 1 - intensity;
}
