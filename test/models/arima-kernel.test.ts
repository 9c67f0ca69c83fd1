/**
 * The ARIMA kernel's own invariants, against plain textbook computations: the stationary
 * covariance (AS 154), the fast Kalman filter, the PACF transform, the root tests and MA flipping.
 */
import { describe, expect, it } from 'vitest';
import { kalmanLikelihood } from '../../models/families/arima/kalman.ts';
import { differencingPolynomial, KAPPA, makeStateSpace } from '../../models/families/arima/arima-state-space.ts';
import { invertMa, polyRoots } from '../../models/families/arima/polyroot.ts';
import { stationaryCovariance } from '../../models/families/arima/stationary-covariance.ts';
import { arToPacf, expandArma, pacfToAr, rootsOutside } from '../../models/families/arima/transform.ts';
import { lcg } from './lcg.ts';

function denseQ0(phi: Float64Array, theta: Float64Array): Float64Array {
  const p = phi.length;
  const q = theta.length;
  const r = Math.max(p, q + 1);
  const out = new Float64Array(r * r);
  if (r === 1) {
    out[0] = p === 0 ? 1 : 1 / (1 - phi[0] * phi[0]);
    return out;
  }
  const np = (r * (r + 1)) / 2;
  const R = (k: number) => (k === 0 ? 1 : k - 1 < q ? theta[k - 1] : 0);
  const V: number[] = [];
  for (let j = 0; j < r; j++) for (let i = j; i < r; i++) V.push(R(i) * R(j));
  if (p === 0) {
    let indn = np;
    let k = np;
    for (let i = 0; i < r; i++)
      for (let j = 0; j <= i; j++) {
        --k;
        out[k] = V[k];
        if (j !== 0) out[k] += out[--indn];
      }
  } else {
    const rbar = new Float64Array((np * (np - 1)) / 2);
    const thetab = new Float64Array(np);
    const dv = new Float64Array(np);
    const x = new Float64Array(np);
    const npr = np - r;
    let eq = 0;
    let inner = -1;
    let self = npr - 1;
    for (let j = 0; j < r; j++) {
      let colI = npr + 1 + j;
      for (let i = j; i < r; i++) {
        let y = V[eq++];
        const pi = i < p ? phi[i] : 0;
        const pj = j < p ? phi[j] : 0;
        x.fill(0);
        if (j !== r - 1) {
          x[npr + j + 1] += -pi;
          if (i !== r - 1) {
            x[colI++] += -pj;
            x[++inner] += -1;
          }
        }
        x[npr] = -pi * pj;
        if (++self >= np) self = 0;
        x[self] += 1;
        let pos = 0;
        for (let c = 0; c < np; c++) {
          const xi = x[c];
          if (xi === 0) {
            pos += np - c - 1;
            continue;
          }
          const di = dv[c];
          const dpi = di + xi * xi;
          dv[c] = dpi;
          const cb = di / dpi;
          const sb = xi / dpi;
          for (let k = c + 1; k < np; k++) {
            const xk = x[k];
            const rb = rbar[pos];
            x[k] = xk - xi * rb;
            rbar[pos++] = cb * rb + sb * xk;
          }
          const yk = y;
          y = yk - xi * thetab[c];
          thetab[c] = cb * thetab[c] + sb * yk;
          if (di === 0) break;
        }
      }
    }
    let pos = rbar.length - 1;
    for (let im = np - 1; im >= 0; im--) {
      let bi = thetab[im];
      for (let jm = np - 1; jm > im; jm--) bi -= rbar[pos--] * out[jm];
      out[im] = bi;
    }
    const first = out.slice(npr, np);
    out.copyWithin(r, 0, npr);
    out.set(first, 0);
  }
  let k = np;
  for (let i = r - 1; i > 0; i--) for (let j = r - 1; j >= i; j--) out[r * i + j] = out[--k];
  for (let i = 0; i < r - 1; i++) for (let j = i + 1; j < r; j++) out[i + r * j] = out[j + r * i];
  return out;
}

/** Kalman filter with full matrices: y = Z a, a' = T a + R e, as a reference for the fast filter. */
function referenceLikelihood(y: Float64Array, phi: Float64Array, theta: Float64Array, delta: Float64Array) {
  const p = phi.length;
  const r = Math.max(p, theta.length + 1);
  const d = delta.length;
  const rd = r + d;
  const T = new Float64Array(rd * rd);
  for (let i = 0; i < p; i++) T[i * rd] = phi[i];
  for (let i = 0; i < r - 1; i++) T[i * rd + i + 1] = 1;
  if (d > 0) {
    T[r * rd] = 1;
    for (let k = 0; k < d; k++) T[r * rd + r + k] = delta[k];
    for (let k = 1; k < d; k++) T[(r + k) * rd + r + k - 1] = 1;
  }
  const Z = new Float64Array(rd);
  Z[0] = 1;
  for (let k = 0; k < d; k++) Z[r + k] = delta[k];
  const Rv = new Float64Array(rd);
  Rv[0] = 1;
  for (let k = 0; k < theta.length; k++) Rv[k + 1] = theta[k];
  let P = new Float64Array(rd * rd);
  const q0 = denseQ0(phi, theta);
  for (let i = 0; i < r; i++) for (let j = 0; j < r; j++) P[i * rd + j] = q0[i + r * j];
  for (let i = r; i < rd; i++) P[i * rd + i] = KAPPA;
  let a = new Float64Array(rd);
  let ssq = 0;
  let sumlog = 0;
  let nu = 0;
  for (let t = 0; t < y.length; t++) {
    if (t > 0) {
      const an = new Float64Array(rd);
      for (let i = 0; i < rd; i++) for (let k = 0; k < rd; k++) an[i] += T[i * rd + k] * a[k];
      a = an;
      const TP = new Float64Array(rd * rd);
      for (let i = 0; i < rd; i++) for (let j = 0; j < rd; j++) for (let k = 0; k < rd; k++) TP[i * rd + j] += T[i * rd + k] * P[k * rd + j];
      const Pn = new Float64Array(rd * rd);
      for (let i = 0; i < rd; i++)
        for (let j = 0; j < rd; j++) {
          let s = Rv[i] * Rv[j];
          for (let k = 0; k < rd; k++) s += TP[i * rd + k] * T[j * rd + k];
          Pn[i * rd + j] = s;
        }
      P = Pn;
    } else {
      // The first prediction is the initial state itself.
    }
    const M = new Float64Array(rd);
    for (let i = 0; i < rd; i++) for (let k = 0; k < rd; k++) M[i] += P[i * rd + k] * Z[k];
    let gain = 0;
    let pred = 0;
    for (let i = 0; i < rd; i++) {
      gain += Z[i] * M[i];
      pred += Z[i] * a[i];
    }
    const e = y[t] - pred;
    if (gain < 1e4) {
      nu++;
      ssq += (e * e) / gain;
      sumlog += Math.log(gain);
    }
    for (let i = 0; i < rd; i++) a[i] += (M[i] * e) / gain;
    for (let i = 0; i < rd; i++) for (let j = 0; j < rd; j++) P[i * rd + j] -= (M[i] * M[j]) / gain;
  }
  return { ssq, sumlog, nu };
}

describe('kernel', () => {
  const specs: [number, number, number, number, number][] = [
    // p, q, P, Q, m
    [1, 0, 0, 0, 1],
    [2, 1, 0, 0, 1],
    [0, 3, 0, 0, 1],
    [3, 2, 0, 0, 1],
    [1, 0, 2, 0, 12],
    [2, 1, 1, 1, 12],
    [0, 1, 0, 1, 24],
    [2, 0, 2, 0, 24],
  ];

  it('the sparse stationary covariance equals the dense AS 154 computation', () => {
    const rand = lcg(7);
    for (const [p, q, P, Q, m] of specs) {
      const o = { p, q, P, Q, m, d: 0, D: 0 };
      const raw = Array.from({ length: p + q + P + Q }, () => 2 * rand() - 1);
      const { phi, theta } = expandArma(raw, o, true);
      const r = Math.max(phi.length, theta.length + 1);
      const fast = new Float64Array(r * r);
      stationaryCovariance(phi, theta, fast);
      const ref = denseQ0(phi, theta);
      for (let i = 0; i < r * r; i++) expect(Object.is(fast[i] + 0, ref[i] + 0) || fast[i] === ref[i]).toBe(true);
    }
  });

  it("the stationary covariance solves Q = T Q T' + R R'", () => {
    const phi = new Float64Array([0.5, -0.3]);
    const theta = new Float64Array([0.4, 0.2]);
    const r = 3;
    const Qm = new Float64Array(r * r);
    stationaryCovariance(phi, theta, Qm);
    const T = (i: number, k: number) => (k === 0 ? (i < 2 ? phi[i] : 0) : k === i + 1 ? 1 : 0);
    const Rv = [1, 0.4, 0.2];
    for (let i = 0; i < r; i++)
      for (let j = 0; j < r; j++) {
        let s = Rv[i] * Rv[j];
        for (let k = 0; k < r; k++) for (let l = 0; l < r; l++) s += T(i, k) * Qm[k + r * l] * T(j, l);
        expect(Qm[i + r * j]).toBeCloseTo(s, 12);
      }
  });

  it('the fast Kalman filter reproduces a plain full-matrix filter', () => {
    const rand = lcg(11);
    const n = 150;
    for (const [p, q, P, Q, m] of specs) {
      for (const [d, D] of [
        [0, 0],
        [1, 0],
        [0, 1],
        [1, 1],
      ]) {
        if (D > 0 && m === 1) continue;
        const o = { p, q, P, Q, m, d, D };
        const raw = Array.from({ length: p + q + P + Q }, () => 1.6 * rand() - 0.8);
        const { phi, theta } = expandArma(raw, o, true);
        const delta = differencingPolynomial(d, D, m);
        const y = new Float64Array(n);
        let level = 0;
        for (let t = 0; t < n; t++) {
          level += d + D > 0 ? rand() - 0.5 : 0;
          y[t] = level + 3 * Math.sin((2 * Math.PI * t) / m) + rand();
        }
        const ref = referenceLikelihood(y, phi, theta, delta);
        // The full filter, and the likelihood-only one (steady state, Chandrasekhar recursions).
        for (const sumsOnly of [false, true]) {
          const fast = kalmanLikelihood(y, makeStateSpace(phi, theta, delta), undefined, { sumsOnly });
          expect(fast.nu).toBe(ref.nu);
          expect(Math.abs(fast.ssq / ref.ssq - 1)).toBeLessThan(1e-9);
          expect(Math.abs(fast.sumlog - ref.sumlog)).toBeLessThan(1e-8 * Math.max(1, Math.abs(ref.sumlog)));
        }
      }
    }
  });

  it('the PACF transform round-trips and always yields a stationary AR polynomial', () => {
    const rand = lcg(3);
    for (let k = 1; k <= 6; k++) {
      for (let rep = 0; rep < 20; rep++) {
        const raw = Float64Array.from({ length: k }, () => 6 * rand() - 3);
        const ar = new Float64Array(k);
        pacfToAr(k, raw, 0, ar, 0);
        expect(rootsOutside(ar, k, 1)).toBe(true);
        const back = new Float64Array(k);
        arToPacf(k, ar, 0, back, 0);
        for (let i = 0; i < k; i++) expect(back[i]).toBeCloseTo(raw[i], 6);
      }
    }
  });

  it('the Schur-Cohn root test agrees with the roots themselves', () => {
    const rand = lcg(5);
    for (let rep = 0; rep < 200; rep++) {
      const k = 1 + Math.floor(rand() * 5);
      const ar = Float64Array.from({ length: k }, () => 2.4 * rand() - 1.2);
      const c = [1, ...Array.from(ar, (v) => -v)];
      const { re, im } = polyRoots(c);
      let minMod = Infinity;
      for (let i = 0; i < re.length; i++) minMod = Math.min(minMod, Math.hypot(re[i], im[i]));
      if (Math.abs(minMod - 1.01) < 1e-6) continue;
      expect(rootsOutside(ar, k, 1.01)).toBe(minMod > 1.01);
    }
  });

  it('flipping MA roots gives an invertible polynomial with the same autocovariances', () => {
    const ma = new Float64Array([2.5, 1.0]); // 1 + 2.5 z + z^2: a root inside the unit circle
    const inv = invertMa(ma);
    expect(
      rootsOutside(
        Float64Array.from(inv, (v) => -v),
        2,
        1,
      ),
    ).toBe(true);
    // Autocovariances of an MA(2) up to the innovation variance: ratio gamma1/gamma0, gamma2/gamma0.
    const acf = (t: ArrayLike<number>) => {
      const g0 = 1 + t[0] ** 2 + t[1] ** 2;
      return [(t[0] + t[0] * t[1]) / g0, t[1] / g0];
    };
    const [a1, a2] = acf(ma);
    const [b1, b2] = acf(inv);
    expect(b1).toBeCloseTo(a1, 10);
    expect(b2).toBeCloseTo(a2, 10);
  });
});

// ---------------------------------------------------------------------------------------------
// The model as the engine calls it.
