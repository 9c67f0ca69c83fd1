import { cholesky, choleskyInverse, choleskySolve, multiply, multiplyTransposed, NotPositiveDefinite } from './dense-spd.ts';
import type { HierarchyStructure } from './hierarchy-structure.ts';
import type { LinearReconciler } from './linear-reconciler.ts';
import type { MinTraceEstimator, WeightMatrix } from './min-trace-weights.ts';
import { ReconciliationError } from './reconciliation-error.ts';

/**
 * min_trace in its constraint form: ỹ = ŷ − W U (U'WU)⁻¹ U'ŷ, where U'ŷ = ŷ_agg − C ŷ_bottom is
 * each aggregate's incoherence. This equals S (S'W⁻¹S)⁻¹ S'W⁻¹ ŷ, but the only system solved is
 * a x a (a aggregate rows), and W stays a diagonal plus a rank-T term (min-trace-weights.ts), so
 * the cost grows with the aggregates and the links, never with the bottoms squared. The bottoms
 * are corrected and the aggregates summed from them, so the result is coherent by construction.
 *
 * Variances follow hierarchicalforecast's Normality: base errors with the given standard
 * deviations and W's correlations, mapped through the same linear map
 * (docs/decisions/050-probabilistic-reconciliation.md).
 */

export function minTraceReconciler(structure: HierarchyStructure, weights: WeightMatrix, estimator: MinTraceEstimator): LinearReconciler {
  const a = structure.aggregateCount;
  const n = structure.rowCount;
  const { diagonal: d, scale, factor: X, observations: T } = weights;
  const { memberStart, members, ancestorStart, ancestors } = structure;

  // Y = U'X: each aggregate's residuals minus its bottoms' (a x T).
  const Y = scale > 0 ? constraintRows(structure, X, T) : new Float64Array(0);
  const M = new Float64Array(a * a);
  for (let j = 0; j < a; j++) M[j * a + j] = d[j];
  addAncestorProducts(structure, d, M);
  if (scale > 0) {
    const YY = multiply(Y, transpose(Y, a, T), a, T, a);
    for (let k = 0; k < a * a; k++) M[k] += scale * YY[k];
  }
  // Each aggregate row of U'WU is its own weight less its bottoms': a model whose aggregate errors
  // are exactly the sums of its bottoms' (naive, with mint_cov) leaves rounding noise there, which
  // its own diagonal cannot tell from a real pivot. The weights of the rows it combines can.
  const rowWeight = (i: number) => {
    let s = 0;
    if (scale > 0) for (let k = 0; k < T; k++) s += X[i * T + k] ** 2;
    return d[i] + scale * s;
  };
  const scales = Float64Array.from({ length: a }, (_, j) => {
    let s = rowWeight(j);
    for (let k = memberStart[j]; k < memberStart[j + 1]; k++) s += rowWeight(a + members[k]);
    return s;
  });
  let L: Float64Array;
  try {
    L = cholesky(M, a, 1e-12, scales);
  } catch (e) {
    if (!(e instanceof NotPositiveDefinite)) throw e;
    const hint = estimator === 'mint_cov' && T - 1 <= a ? `: mint_cov needs more than ${a + 1} residuals per series here, got ${T}` : '';
    throw new ReconciliationError('ill_conditioned', `min_trace with ${estimator} leaves the constraint system singular (${e.message})${hint}`, ['estimator']);
  }
  let inverse: Float64Array | null = null;
  let inverseY: Float64Array | null = null;

  const incoherence = (y: Float64Array): Float64Array => {
    const e = new Float64Array(a);
    for (let j = 0; j < a; j++) {
      let s = y[j];
      for (let k = memberStart[j]; k < memberStart[j + 1]; k++) s -= y[a + members[k]];
      e[j] = s;
    }
    return e;
  };

  const root = Math.sqrt(scale);
  /**
   * Base errors: V = diag(delta) + F F' with F_i = root g_i X_i, W's correlations scaled to the
   * standard deviations (g_i = sd_i / sqrt(W_ii)); diagonal when W is.
   */
  const baseErrors = (sd: Float64Array) => {
    const delta = new Float64Array(n);
    const g = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (scale === 0) {
        delta[i] = sd[i] * sd[i];
        continue;
      }
      let s = 0;
      for (let k = 0; k < T; k++) s += X[i * T + k] ** 2;
      g[i] = sd[i] / Math.max(Math.sqrt(d[i] + scale * s), 1e-8);
      delta[i] = g[i] * g[i] * d[i];
    }
    return { delta, g };
  };

  return {
    drawBaseErrors(sd, normal, out) {
      const { delta, g } = baseErrors(sd);
      const common = Float64Array.from({ length: T }, normal);
      for (let i = 0; i < n; i++) {
        let shared = 0;
        if (scale > 0) for (let k = 0; k < T; k++) shared += X[i * T + k] * common[k];
        out[i] = Math.sqrt(delta[i]) * normal() + root * g[i] * shared;
      }
    },

    bottoms(_step, y, out) {
      const lambda = choleskySolve(L, a, incoherence(y));
      const t = new Float64Array(T);
      if (scale > 0) for (let j = 0; j < a; j++) for (let k = 0; k < T; k++) t[k] += Y[j * T + k] * lambda[j];
      for (let b = 0; b < structure.bottomCount; b++) {
        const row = a + b;
        let u = 0;
        for (let k = ancestorStart[b]; k < ancestorStart[b + 1]; k++) u -= lambda[ancestors[k]];
        let correction = d[row] * u;
        if (scale > 0) for (let k = 0; k < T; k++) correction += scale * X[row * T + k] * t[k];
        out[b] = y[row] - correction;
      }
    },

    variances(_step, sd) {
      inverse ??= choleskyInverse(L, a);
      inverseY ??= scale > 0 ? multiply(inverse, Y, a, a, T) : new Float64Array(0);
      const Minv = inverse;
      const MY = inverseY;
      const correlated = scale > 0;
      const { delta, g } = baseErrors(sd);
      // N = U' diag(delta) U + Z Z' with Z = U'F. Q = M⁻¹ N M⁻¹ is read only where the rows'
      // patterns reach it; B = U' diag(delta) U is as sparse as the ancestors' overlaps.
      const B = new Float64Array(a * a);
      for (let j = 0; j < a; j++) B[j * a + j] = delta[j];
      addAncestorProducts(structure, delta, B);
      const BM = multiply(B, Minv, a, a, a);
      let MZ: Float64Array = new Float64Array(0);
      let QY: Float64Array = new Float64Array(0);
      let YMZ: Float64Array = new Float64Array(0);
      let YQY: Float64Array = new Float64Array(0);
      if (correlated) {
        const F = new Float64Array(n * T);
        for (let i = 0; i < n; i++) for (let k = 0; k < T; k++) F[i * T + k] = root * g[i] * X[i * T + k];
        const Z = constraintRows(structure, F, T);
        MZ = multiply(Minv, Z, a, a, T);
        // Q Y = M⁻¹ B M⁻¹ Y + (M⁻¹ Z)(Z' M⁻¹ Y).
        QY = multiply(Minv, multiply(B, MY, a, a, T), a, a, T);
        const lowRank = multiply(MZ, multiplyTransposed(Z, MY, a, T, T), a, T, T);
        for (let k = 0; k < a * T; k++) QY[k] += lowRank[k];
        YMZ = foldedUpper(multiplyTransposed(Y, MZ, a, T, T), T);
        YQY = foldedUpper(multiplyTransposed(Y, QY, a, T, T), T);
      }
      const entries = new Map<number, number>();
      const qEntry = (j: number, l: number): number => {
        const key = j < l ? j * a + l : l * a + j;
        let value = entries.get(key);
        if (value !== undefined) return value;
        value = 0;
        for (let k = 0; k < a; k++) value += Minv[j * a + k] * BM[k * a + l];
        if (correlated) for (let k = 0; k < T; k++) value += MZ[j * T + k] * MZ[l * T + k];
        entries.set(key, value);
        return value;
      };

      const out = new Float64Array(n);
      const uMY = new Float64Array(T);
      const uMZ = new Float64Array(T);
      const uQY = new Float64Array(T);
      const columns = new Int32Array(Math.max(1, a));
      for (let i = 0; i < n; i++) {
        // U's row i: +1 at an aggregate's own column, -1 at each of a bottom's ancestors.
        let count = 1;
        const sign = i < a ? 1 : -1;
        if (i < a) columns[0] = i;
        else {
          count = ancestorStart[i - a + 1] - ancestorStart[i - a];
          for (let p = 0; p < count; p++) columns[p] = ancestors[ancestorStart[i - a] + p];
        }
        let uMu = 0;
        let uQu = 0;
        for (let p = 0; p < count; p++) {
          for (let q = 0; q < count; q++) {
            uMu += Minv[columns[p] * a + columns[q]];
            uQu += qEntry(columns[p], columns[q]);
          }
        }
        let v = sd[i] * sd[i] - 2 * d[i] * delta[i] * uMu + d[i] * d[i] * uQu;
        if (correlated) {
          uMY.fill(0);
          uMZ.fill(0);
          uQY.fill(0);
          for (let p = 0; p < count; p++) {
            const from = columns[p] * T;
            for (let k = 0; k < T; k++) {
              uMY[k] += sign * MY[from + k];
              uMZ[k] += sign * MZ[from + k];
              uQY[k] += sign * QY[from + k];
            }
          }
          const x = i * T;
          let xMY = 0;
          let xMZ = 0;
          let xQY = 0;
          let xPx = 0;
          let xQx = 0;
          for (let k = 0; k < T; k++) {
            const xk = X[x + k];
            xMY += xk * uMY[k];
            xMZ += xk * uMZ[k];
            xQY += xk * uQY[k];
            let p = 0;
            let q = 0;
            for (let l = k; l < T; l++) {
              p += YMZ[k * T + l] * X[x + l];
              q += YQY[k * T + l] * X[x + l];
            }
            xPx += xk * p;
            xQx += xk * q;
          }
          // F_i = root g_i X_i, so the terms in F_i are terms in X_i.
          const f = root * g[i];
          v -= 2 * (d[i] * f * xMZ + scale * delta[i] * xMY + scale * f * xPx);
          v += 2 * scale * d[i] * xQY + scale * scale * xQx;
        }
        out[i] = Math.max(v, 0);
      }
      return out;
    },
  };
}

/** A T x T matrix folded onto its upper triangle (A_kl + A_lk above the diagonal): the same quadratic form at half the cost. */
function foldedUpper(A: Float64Array, T: number): Float64Array {
  const out = new Float64Array(T * T);
  for (let k = 0; k < T; k++) {
    out[k * T + k] = A[k * T + k];
    for (let l = k + 1; l < T; l++) out[k * T + l] = A[k * T + l] + A[l * T + k];
  }
  return out;
}

/** U'V for a row-major n x T matrix V: each aggregate's row minus its bottoms' rows. */
function constraintRows(structure: HierarchyStructure, V: Float64Array, T: number): Float64Array {
  const a = structure.aggregateCount;
  const out = new Float64Array(a * T);
  for (let j = 0; j < a; j++) {
    for (let k = 0; k < T; k++) out[j * T + k] = V[j * T + k];
    for (let m = structure.memberStart[j]; m < structure.memberStart[j + 1]; m++) {
      const from = (a + structure.members[m]) * T;
      for (let k = 0; k < T; k++) out[j * T + k] -= V[from + k];
    }
  }
  return out;
}

/** Adds sum over bottoms b of w_b u_b u_b' to an a x a matrix (u_b: b's ancestors' indicator). */
function addAncestorProducts(structure: HierarchyStructure, w: Float64Array, target: Float64Array): void {
  const a = structure.aggregateCount;
  for (let b = 0; b < structure.bottomCount; b++) {
    const wb = w[a + b];
    for (let p = structure.ancestorStart[b]; p < structure.ancestorStart[b + 1]; p++) {
      const row = structure.ancestors[p] * a;
      for (let q = structure.ancestorStart[b]; q < structure.ancestorStart[b + 1]; q++) target[row + structure.ancestors[q]] += wb;
    }
  }
}

function transpose(A: Float64Array, m: number, p: number): Float64Array {
  const out = new Float64Array(m * p);
  for (let i = 0; i < m; i++) for (let j = 0; j < p; j++) out[j * m + i] = A[i * p + j];
  return out;
}
