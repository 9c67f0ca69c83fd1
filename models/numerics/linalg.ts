/** Small dense linear algebra shared by the ARIMA kernel and the foundation adapters' regressions (row-major n x n unless stated otherwise). */

export class SingularError extends Error {
  override readonly name = 'SingularError';
}

/**
 * Inverse of a square matrix by LU with partial pivoting. Throws SingularError on an exactly
 * zero pivot, or when the reciprocal 1-norm condition number is below machine epsilon: the
 * same two refusals as R's solve(), which decide whether a fit's covariance exists.
 */
export function invert(A: ArrayLike<number>, n: number): Float64Array {
  const lu = Float64Array.from(A as ArrayLike<number>);
  const piv = new Int32Array(n);
  let anorm = 0;
  for (let j = 0; j < n; j++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += Math.abs(lu[i * n + j]);
    if (s > anorm || Number.isNaN(s)) anorm = s;
  }
  for (let k = 0; k < n; k++) {
    let p = k;
    let best = Math.abs(lu[k * n + k]);
    for (let i = k + 1; i < n; i++) {
      const v = Math.abs(lu[i * n + k]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    piv[k] = p;
    if (p !== k) {
      for (let j = 0; j < n; j++) {
        const tmp = lu[k * n + j];
        lu[k * n + j] = lu[p * n + j];
        lu[p * n + j] = tmp;
      }
    }
    const d = lu[k * n + k];
    if (d === 0) throw new SingularError(`Lapack routine dgesv: system is exactly singular: U[${k + 1},${k + 1}] = 0`);
    for (let i = k + 1; i < n; i++) {
      const f = (lu[i * n + k] /= d);
      if (f !== 0) for (let j = k + 1; j < n; j++) lu[i * n + j] -= f * lu[k * n + j];
    }
  }
  // Solve for the identity, column by column.
  const inv = new Float64Array(n * n);
  const col = new Float64Array(n);
  for (let c = 0; c < n; c++) {
    col.fill(0);
    col[c] = 1;
    for (let k = 0; k < n; k++) {
      const p = piv[k];
      if (p !== k) {
        const tmp = col[k];
        col[k] = col[p];
        col[p] = tmp;
      }
    }
    for (let i = 0; i < n; i++) {
      let s = col[i];
      for (let j = 0; j < i; j++) s -= lu[i * n + j] * col[j];
      col[i] = s;
    }
    for (let i = n - 1; i >= 0; i--) {
      let s = col[i];
      for (let j = i + 1; j < n; j++) s -= lu[i * n + j] * col[j];
      col[i] = s / lu[i * n + i];
    }
    for (let i = 0; i < n; i++) inv[i * n + c] = col[i];
  }
  let inorm = 0;
  for (let j = 0; j < n; j++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += Math.abs(inv[i * n + j]);
    if (s > inorm || Number.isNaN(s)) inorm = s;
  }
  const rcond = 1 / (anorm * inorm);
  if (rcond < Number.EPSILON) throw new SingularError(`system is computationally singular: reciprocal condition number = ${rcond}`);
  return inv;
}

/** Least squares fit of y on the columns of X (column-major, n rows, k columns). */
export interface LeastSquares {
  readonly coef: Float64Array;
  /** Standard errors of the coefficients (NaN without residual degrees of freedom). */
  readonly se: Float64Array;
  readonly rank: number;
}

/**
 * Ordinary least squares by Householder QR without pivoting; rows with a non-finite value are
 * dropped. A column whose pivot falls below 1e-7 of its norm makes the fit rank deficient
 * (rank < k), which callers treat as lm's NA coefficients.
 */
export function leastSquares(y: ArrayLike<number>, X: ArrayLike<number>, n: number, k: number): LeastSquares {
  const rows: number[] = [];
  for (let i = 0; i < n; i++) {
    let ok = Number.isFinite(y[i]);
    for (let j = 0; j < k && ok; j++) ok = Number.isFinite(X[j * n + i]);
    if (ok) rows.push(i);
  }
  const m = rows.length;
  const A = new Float64Array(m * k); // column-major m x k
  const b = new Float64Array(m);
  for (let r = 0; r < m; r++) {
    b[r] = y[rows[r]];
    for (let j = 0; j < k; j++) A[j * m + r] = X[j * n + rows[r]];
  }
  const colNorm = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    let s = 0;
    for (let r = 0; r < m; r++) s += A[j * m + r] * A[j * m + r];
    colNorm[j] = Math.sqrt(s);
  }
  let rank = 0;
  const diag = new Float64Array(k);
  for (let j = 0; j < Math.min(k, m); j++) {
    let s = 0;
    for (let r = j; r < m; r++) s += A[j * m + r] * A[j * m + r];
    const norm = Math.sqrt(s);
    if (!(norm > 1e-7 * colNorm[j]) || norm === 0) break;
    const alpha = A[j * m + j] > 0 ? -norm : norm;
    // v = x - alpha e1, stored in place below the diagonal.
    A[j * m + j] -= alpha;
    let vv = 0;
    for (let r = j; r < m; r++) vv += A[j * m + r] * A[j * m + r];
    for (let c = j + 1; c < k; c++) {
      let dot = 0;
      for (let r = j; r < m; r++) dot += A[j * m + r] * A[c * m + r];
      const f = (2 * dot) / vv;
      for (let r = j; r < m; r++) A[c * m + r] -= f * A[j * m + r];
    }
    let dot = 0;
    for (let r = j; r < m; r++) dot += A[j * m + r] * b[r];
    const f = (2 * dot) / vv;
    for (let r = j; r < m; r++) b[r] -= f * A[j * m + r];
    diag[j] = alpha;
    rank++;
  }
  const coef = new Float64Array(k).fill(NaN);
  const se = new Float64Array(k).fill(NaN);
  if (rank < k) return { coef, se, rank };
  // R is upper triangular: diag on the diagonal, A[c * m + j] above it.
  const Rm = (i: number, j: number) => (i === j ? diag[i] : A[j * m + i]);
  for (let i = k - 1; i >= 0; i--) {
    let s = b[i];
    for (let j = i + 1; j < k; j++) s -= Rm(i, j) * coef[j];
    coef[i] = s / Rm(i, i);
  }
  let rss = 0;
  for (let r = k; r < m; r++) rss += b[r] * b[r];
  const dof = m - k;
  const s2 = dof > 0 ? rss / dof : NaN;
  // diag((R'R)^-1) = row norms of R^-1.
  const Rinv = new Float64Array(k * k);
  for (let c = 0; c < k; c++) {
    for (let i = k - 1; i >= 0; i--) {
      let s = i === c ? 1 : 0;
      for (let j = i + 1; j < k; j++) s -= Rm(i, j) * Rinv[j * k + c];
      Rinv[i * k + c] = s / Rm(i, i);
    }
  }
  for (let i = 0; i < k; i++) {
    let s = 0;
    for (let c = 0; c < k; c++) s += Rinv[i * k + c] * Rinv[i * k + c];
    se[i] = Math.sqrt(s * s2);
  }
  return { coef, se, rank };
}

/**
 * Eigenvalues and eigenvectors of a symmetric k x k matrix (cyclic Jacobi), ordered by decreasing
 * eigenvalue; `vectors` holds them as columns (row-major).
 */
export function symmetricEigen(S: ArrayLike<number>, k: number): { values: Float64Array; vectors: Float64Array } {
  const A = Float64Array.from(S as ArrayLike<number>);
  const V = new Float64Array(k * k);
  for (let i = 0; i < k; i++) V[i * k + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let i = 0; i < k; i++) for (let j = i + 1; j < k; j++) off += A[i * k + j] * A[i * k + j];
    if (off < 1e-30) break;
    for (let p = 0; p < k; p++) {
      for (let q = p + 1; q < k; q++) {
        const apq = A[p * k + q];
        if (apq === 0) continue;
        const theta = (A[q * k + q] - A[p * k + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let r = 0; r < k; r++) {
          const arp = A[r * k + p];
          const arq = A[r * k + q];
          A[r * k + p] = c * arp - s * arq;
          A[r * k + q] = s * arp + c * arq;
        }
        for (let r = 0; r < k; r++) {
          const apr = A[p * k + r];
          const aqr = A[q * k + r];
          A[p * k + r] = c * apr - s * aqr;
          A[q * k + r] = s * apr + c * aqr;
        }
        for (let r = 0; r < k; r++) {
          const vrp = V[r * k + p];
          const vrq = V[r * k + q];
          V[r * k + p] = c * vrp - s * vrq;
          V[r * k + q] = s * vrp + c * vrq;
        }
      }
    }
  }
  const order = Array.from({ length: k }, (_, i) => i).sort((a, b) => A[b * k + b] - A[a * k + a]);
  const values = Float64Array.from(order, (i) => A[i * k + i]);
  const vectors = new Float64Array(k * k);
  for (let c = 0; c < k; c++) for (let r = 0; r < k; r++) vectors[r * k + c] = V[r * k + order[c]];
  return { values, vectors };
}

/** Eigenvectors of a symmetric matrix by decreasing eigenvalue: the right singular vectors of X when given X'X. */
export const symmetricEigenvectors = (S: ArrayLike<number>, k: number): Float64Array => symmetricEigen(S, k).vectors;

/** Bᵀ M B for k x k row-major matrices: how a covariance M carries through the linear map B. */
export function congruence(M: ArrayLike<number>, B: ArrayLike<number>, k: number): Float64Array {
  const MB = new Float64Array(k * k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let l = 0; l < k; l++) s += M[i * k + l] * B[l * k + j];
      MB[i * k + j] = s;
    }
  }
  const out = new Float64Array(k * k);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let l = 0; l < k; l++) s += B[l * k + i] * MB[l * k + j];
      out[i * k + j] = s;
    }
  }
  return out;
}
