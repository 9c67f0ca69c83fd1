/**
 * Ordinary least squares for the tiny regressions of the initial-state heuristic, by Householder
 * QR (as R's `lm`/`lsfit` do) rather than normal equations: a trend column 1..n next to unit
 * sized Fourier terms is ill-conditioned enough that squaring the condition number would show.
 */

/** Coefficients b minimising |y - X b|; `columns[j]` is column j of X. Returns NaN on rank loss. */
export function leastSquares(columns: readonly Float64Array[], y: Float64Array): Float64Array {
  const n = y.length;
  const p = columns.length;
  const a = columns.map((c) => Float64Array.from(c));
  const rhs = Float64Array.from(y);
  const beta = new Float64Array(p);
  for (let j = 0; j < p; j++) {
    const col = a[j];
    let norm = 0;
    for (let i = j; i < n; i++) norm += col[i] * col[i];
    norm = Math.sqrt(norm);
    if (norm === 0) return beta.fill(Number.NaN);
    const alpha = col[j] > 0 ? -norm : norm;
    // Householder vector v = x - alpha e_j, stored in place of the column below the diagonal.
    col[j] -= alpha;
    let vv = 0;
    for (let i = j; i < n; i++) vv += col[i] * col[i];
    const reflect = (target: Float64Array): void => {
      let dot = 0;
      for (let i = j; i < n; i++) dot += col[i] * target[i];
      const f = (2 * dot) / vv;
      for (let i = j; i < n; i++) target[i] -= f * col[i];
    };
    for (let k = j + 1; k < p; k++) reflect(a[k]);
    reflect(rhs);
    col[j] = alpha; // the diagonal of R
  }
  for (let j = p - 1; j >= 0; j--) {
    let s = rhs[j];
    for (let k = j + 1; k < p; k++) s -= a[k][j] * beta[k];
    beta[j] = s / a[j][j];
  }
  return beta;
}
