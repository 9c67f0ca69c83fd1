/**
 * Complex roots of small real polynomials, and the MA root flip that uses them.
 *
 * Aberth-Ehrlich simultaneous iteration: cubic convergence for simple roots, robust start on a
 * circle of the Cauchy-bound radius. Only low degrees (q <= 5, Q <= 2) go through here; the
 * high-degree stationarity checks use the Schur-Cohn test in transform.ts instead.
 */

export interface ComplexRoots {
  readonly re: Float64Array;
  readonly im: Float64Array;
}

/** Roots of c[0] + c[1] z + ... + c[k] z^k, with c[k] != 0. */
export function polyRoots(c: ArrayLike<number>): ComplexRoots {
  let k = c.length - 1;
  while (k > 0 && c[k] === 0) k--;
  const re = new Float64Array(k);
  const im = new Float64Array(k);
  if (k === 0) return { re, im };
  // Monic coefficients, highest first: z^k + a[1] z^(k-1) + ... + a[k].
  const a = new Float64Array(k + 1);
  for (let i = 0; i <= k; i++) a[i] = c[k - i] / c[k];
  if (k === 1) {
    re[0] = -a[1];
    return { re, im };
  }
  let bound = 0;
  for (let i = 1; i <= k; i++) bound = Math.max(bound, Math.abs(a[i]));
  const radius = Math.min(1 + bound, 1e8);
  for (let i = 0; i < k; i++) {
    const ang = (2 * Math.PI * i) / k + 0.4;
    re[i] = radius * Math.cos(ang);
    im[i] = radius * Math.sin(ang);
  }
  for (let iter = 0; iter < 500; iter++) {
    let moved = 0;
    for (let i = 0; i < k; i++) {
      const zr = re[i];
      const zi = im[i];
      // p(z) and p'(z) by Horner.
      let pr = 1;
      let pi = 0;
      let dr = 0;
      let di = 0;
      for (let j = 1; j <= k; j++) {
        const ndr = dr * zr - di * zi + pr;
        const ndi = dr * zi + di * zr + pi;
        dr = ndr;
        di = ndi;
        const npr = pr * zr - pi * zi + a[j];
        const npi = pr * zi + pi * zr;
        pr = npr;
        pi = npi;
      }
      if (pr === 0 && pi === 0) continue;
      // ratio = p / p'
      const dd = dr * dr + di * di;
      if (dd === 0) continue;
      const rr = (pr * dr + pi * di) / dd;
      const ri = (pi * dr - pr * di) / dd;
      // sum of 1 / (z - z_j)
      let sr = 0;
      let si = 0;
      for (let j = 0; j < k; j++) {
        if (j === i) continue;
        const xr = zr - re[j];
        const xi = zi - im[j];
        const xx = xr * xr + xi * xi;
        if (xx === 0) continue;
        sr += xr / xx;
        si += -xi / xx;
      }
      // w = ratio / (1 - ratio * s)
      const denr = 1 - (rr * sr - ri * si);
      const deni = -(rr * si + ri * sr);
      const den = denr * denr + deni * deni;
      if (den === 0) continue;
      const wr = (rr * denr + ri * deni) / den;
      const wi = (ri * denr - rr * deni) / den;
      re[i] = zr - wr;
      im[i] = zi - wi;
      moved = Math.max(moved, Math.hypot(wr, wi) / Math.max(1e-300, Math.hypot(re[i], im[i])));
    }
    if (moved < 1e-15) break;
  }
  return { re, im };
}

/**
 * Reflects the roots of 1 + ma_1 z + ... + ma_q z^q that lie inside the unit circle to their
 * inverses, giving the invertible MA polynomial with the same autocorrelations.
 */
export function invertMa(ma: Float64Array): Float64Array {
  const q = ma.length;
  let q0 = q;
  while (q0 > 0 && ma[q0 - 1] === 0) q0--;
  if (q0 === 0) return ma;
  const c = new Float64Array(q0 + 1);
  c[0] = 1;
  for (let i = 0; i < q0; i++) c[i + 1] = ma[i];
  const { re, im } = polyRoots(c);
  let any = false;
  for (let i = 0; i < q0; i++) if (Math.hypot(re[i], im[i]) < 1) any = true;
  if (!any) return ma;
  const out = new Float64Array(q);
  if (q0 === 1) {
    out[0] = 1 / ma[0];
    return out;
  }
  // Rebuild prod (1 - z / r_i) with the flipped roots, in complex arithmetic.
  let xr = new Float64Array([1]);
  let xi = new Float64Array([0]);
  for (let i = 0; i < q0; i++) {
    let rr = re[i];
    let ri = im[i];
    if (Math.hypot(rr, ri) < 1) {
      const m2 = rr * rr + ri * ri;
      rr = rr / m2;
      ri = -ri / m2;
    }
    // 1 / r
    const m2 = rr * rr + ri * ri;
    const ir = rr / m2;
    const ii = -ri / m2;
    const nr = new Float64Array(xr.length + 1);
    const ni = new Float64Array(xr.length + 1);
    for (let j = 0; j < xr.length; j++) {
      nr[j] += xr[j];
      ni[j] += xi[j];
      nr[j + 1] -= xr[j] * ir - xi[j] * ii;
      ni[j + 1] -= xr[j] * ii + xi[j] * ir;
    }
    xr = nr;
    xi = ni;
  }
  for (let i = 0; i < q0; i++) out[i] = xr[i + 1];
  return out;
}
