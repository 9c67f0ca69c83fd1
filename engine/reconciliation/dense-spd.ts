/**
 * Dense symmetric positive definite algebra for the one small matrix min_trace solves with: the
 * aggregates-by-aggregates system U'WU (row-major a x a). Cholesky rather than LU: the system is
 * symmetric, and a failed factorisation is the plain sign that the weights leave it singular.
 */

export class NotPositiveDefinite extends Error {
  override readonly name = 'NotPositiveDefinite';
}

/**
 * Lower Cholesky factor L (row-major, L L' = A). A pivot at or below `tolerance` times its row's
 * scale is taken as singular: the row then adds almost nothing the rows before it lack, and
 * solutions would carry no significant digit there. The scale is the diagonal entry unless
 * `scales` gives one: where the entry is itself a difference that cancels (rounding noise), it
 * is no measure of what the row should hold.
 */
export function cholesky(A: Float64Array, n: number, tolerance = 1e-12, scales?: Float64Array): Float64Array {
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    let d = A[j * n + j];
    for (let k = 0; k < j; k++) d -= L[j * n + k] * L[j * n + k];
    if (!(d > tolerance * (scales ? scales[j] : A[j * n + j]))) throw new NotPositiveDefinite(`pivot ${j + 1} of ${n} is ${d}`);
    const root = Math.sqrt(d);
    L[j * n + j] = root;
    for (let i = j + 1; i < n; i++) {
      let s = A[i * n + j];
      for (let k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / root;
    }
  }
  return L;
}

/** Solves L L' x = b in place. */
export function choleskySolve(L: Float64Array, n: number, b: Float64Array): Float64Array {
  for (let i = 0; i < n; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= L[i * n + k] * b[k];
    b[i] = s / L[i * n + i];
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = b[i];
    for (let k = i + 1; k < n; k++) s -= L[k * n + i] * b[k];
    b[i] = s / L[i * n + i];
  }
  return b;
}

/** (L L')^-1, symmetric, row-major. */
export function choleskyInverse(L: Float64Array, n: number): Float64Array {
  const inverse = new Float64Array(n * n);
  const column = new Float64Array(n);
  for (let c = 0; c < n; c++) {
    column.fill(0);
    column[c] = 1;
    choleskySolve(L, n, column);
    for (let i = 0; i < n; i++) inverse[i * n + c] = column[i];
  }
  return inverse;
}

/** C = A B for row-major A (m x k) and B (k x p). */
export function multiply(A: Float64Array, B: Float64Array, m: number, k: number, p: number): Float64Array {
  const C = new Float64Array(m * p);
  for (let i = 0; i < m; i++) {
    const row = i * p;
    for (let t = 0; t < k; t++) {
      const a = A[i * k + t];
      if (a === 0) continue;
      const from = t * p;
      for (let j = 0; j < p; j++) C[row + j] += a * B[from + j];
    }
  }
  return C;
}

/** C = A' B for row-major A (m x k) and B (m x p): a k x p result. */
export function multiplyTransposed(A: Float64Array, B: Float64Array, m: number, k: number, p: number): Float64Array {
  const C = new Float64Array(k * p);
  for (let i = 0; i < m; i++) {
    for (let t = 0; t < k; t++) {
      const a = A[i * k + t];
      if (a === 0) continue;
      const row = t * p;
      const from = i * p;
      for (let j = 0; j < p; j++) C[row + j] += a * B[from + j];
    }
  }
  return C;
}
