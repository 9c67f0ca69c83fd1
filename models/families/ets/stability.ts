/**
 * Is every root of a real polynomial inside the closed disc |z| <= radius? By the Schur-Cohn
 * step-down test (O(d^2), no roots) where R computes all roots on every likelihood evaluation of a
 * seasonal model, which would cost more than the likelihood itself here. Each step divides out one
 * reflection coefficient k = p0/pd; all roots lie strictly inside the unit circle iff every |k| < 1.
 * Testing p(radius * w) moves R's tolerance (1 + 1e-10) into the polynomial.
 */

/** Scratch, grown on demand: the test runs inside the optimiser loop. */
let bufA = new Float64Array(32);
let bufB = new Float64Array(32);

/**
 * `coef` lists coefficients from the constant term upwards; only the first `degree + 1` are used.
 * A root exactly on the circle of `radius` counts as outside (strict test); callers deflate
 * structural unit roots first.
 */
export function rootsWithin(coef: Float64Array, degree: number, radius: number): boolean {
  if (bufA.length < degree + 1) {
    bufA = new Float64Array(2 * (degree + 1));
    bufB = new Float64Array(2 * (degree + 1));
  }
  let p = bufA;
  let q = bufB;
  let scale = 1;
  for (let i = 0; i <= degree; i++) {
    p[i] = coef[i] * scale;
    scale *= radius;
  }
  let d = degree;
  // A vanishing leading coefficient lowers the degree (no such case arises from ETS models).
  while (d > 0 && p[d] === 0) d--;
  while (d > 0) {
    const k = p[0] / p[d];
    if (!(Math.abs(k) < 1)) return false;
    // q(z) = (p(z) - k z^d p(1/z)) / z has one root fewer inside the circle and the same outside.
    let norm = 0;
    for (let i = 0; i < d; i++) {
      const v = p[i + 1] - k * p[d - 1 - i];
      q[i] = v;
      if (Math.abs(v) > norm) norm = Math.abs(v);
    }
    d--;
    if (!(norm > 0)) return false;
    // Renormalise so that repeated (1 - k^2) factors cannot underflow.
    for (let i = 0; i <= d; i++) q[i] /= norm;
    const t = p;
    p = q;
    q = t;
  }
  return true;
}
