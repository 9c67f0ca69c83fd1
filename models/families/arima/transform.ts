/**
 * Parameter maps between the optimiser's unconstrained space and ARMA coefficients: partial
 * autocorrelations squashed by tanh, so every point the exact likelihood's optimiser visits is a
 * stationary AR polynomial (Jones 1980; Monahan 1984). The map is the Durbin-Levinson recursion run
 * forwards, its inverse backwards; the backward recursion (Schur-Cohn) also answers auto.arima's
 * root checks.
 */

/** Orders of an ARIMA(p,d,q)(P,D,Q)m model in the layout stats::arima calls `arma`. */
export interface ArmaOrders {
  readonly p: number;
  readonly q: number;
  readonly P: number;
  readonly Q: number;
  /** Seasonal period (1 when there is no seasonal part). */
  readonly m: number;
  readonly d: number;
  readonly D: number;
}

/** Number of ARMA coefficients (p + q + P + Q): they come first in every coefficient vector. */
export function armaCount(o: ArmaOrders): number {
  return o.p + o.q + o.P + o.Q;
}

/** tanh then the Durbin-Levinson recursion: reals -> coefficients of a stationary AR(k). */
export function pacfToAr(k: number, raw: ArrayLike<number>, rawOffset: number, out: Float64Array, outOffset: number): void {
  if (k === 0) return;
  const work = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    const v = Math.tanh(raw[rawOffset + j]);
    work[j] = v;
    out[outOffset + j] = v;
  }
  for (let j = 1; j < k; j++) {
    const a = out[outOffset + j];
    for (let i = 0; i < j; i++) work[i] -= a * out[outOffset + j - i - 1];
    for (let i = 0; i < j; i++) out[outOffset + i] = work[i];
  }
}

/** Inverse of pacfToAr: AR coefficients -> atanh of their partial autocorrelations. */
export function arToPacf(k: number, ar: ArrayLike<number>, arOffset: number, out: Float64Array, outOffset: number): void {
  if (k === 0) return;
  const cur = new Float64Array(k);
  const work = new Float64Array(k);
  for (let j = 0; j < k; j++) cur[j] = work[j] = ar[arOffset + j];
  for (let j = k - 1; j > 0; j--) {
    const a = cur[j];
    for (let i = 0; i < j; i++) work[i] = (cur[i] + a * cur[j - i - 1]) / (1 - a * a);
    for (let i = 0; i < j; i++) cur[i] = work[i];
  }
  for (let j = 0; j < k; j++) out[outOffset + j] = Math.atanh(cur[j]);
}

/** Applies pacfToAr to the AR and seasonal AR blocks of a coefficient vector; the rest is copied. */
export function undoTransform(par: ArrayLike<number>, o: ArmaOrders): Float64Array {
  const out = Float64Array.from(par as ArrayLike<number>);
  pacfToAr(o.p, par, 0, out, 0);
  pacfToAr(o.P, par, o.p + o.q, out, o.p + o.q);
  return out;
}

/** Inverse of undoTransform (the AR blocks must be stationary). */
export function invTransform(par: ArrayLike<number>, o: ArmaOrders): Float64Array {
  const out = Float64Array.from(par as ArrayLike<number>);
  arToPacf(o.p, par, 0, out, 0);
  arToPacf(o.P, par, o.p + o.q, out, o.p + o.q);
  return out;
}

/**
 * Jacobian of undoTransform by forward differences (step 1e-3, as R uses for the delta method):
 * entry [i * n + j] is d(out_j) / d(raw_i). Non-AR rows are the identity.
 */
export function transformJacobian(par: ArrayLike<number>, o: ArmaOrders): Float64Array {
  const n = par.length;
  const A = new Float64Array(n * n);
  for (let i = 0; i < n; i++) A[i * n + i] = 1;
  const eps = 1e-3;
  const block = (k: number, off: number) => {
    if (k === 0) return;
    const w1 = new Float64Array(k);
    const w2 = new Float64Array(k);
    const w3 = new Float64Array(k);
    for (let i = 0; i < k; i++) w1[i] = par[off + i];
    pacfToAr(k, w1, 0, w2, 0);
    for (let i = 0; i < k; i++) {
      w1[i] += eps;
      pacfToAr(k, w1, 0, w3, 0);
      for (let j = 0; j < k; j++) A[(off + i) * n + off + j] = (w3[j] - w2[j]) / eps;
      w1[i] -= eps;
    }
  };
  block(o.p, 0);
  block(o.P, o.p + o.q);
  return A;
}

/** Expanded polynomials: phi of length p + m P and theta of length q + m Q (seasonal products multiplied out). */
export interface ExpandedArma {
  readonly phi: Float64Array;
  readonly theta: Float64Array;
}

/**
 * Coefficient vector (ar, ma, sar, sma, ...) -> expanded AR and MA polynomials, optionally
 * mapping the AR blocks from the unconstrained space first. Inside an optimiser's loop, `out`
 * (polynomials of the right lengths) and `mapped` (par's length) take the results in place.
 */
export function expandArma(par: ArrayLike<number>, o: ArmaOrders, transform: boolean, out?: ExpandedArma, mapped?: Float64Array): ExpandedArma {
  const np = o.p + o.m * o.P;
  const nq = o.q + o.m * o.Q;
  const phi = out && out.phi.length === np ? out.phi : new Float64Array(np);
  const theta = out && out.theta.length === nq ? out.theta : new Float64Array(nq);
  let params: ArrayLike<number> = par;
  if (transform && (o.p > 0 || o.P > 0)) {
    const t = mapped && mapped.length === par.length ? mapped : new Float64Array(par.length);
    t.set(par);
    pacfToAr(o.p, par, 0, t, 0);
    pacfToAr(o.P, par, o.p + o.q, t, o.p + o.q);
    params = t;
  }
  const sp = o.p + o.q;
  const sq = sp + o.P;
  phi.fill(0);
  theta.fill(0);
  for (let i = 0; i < o.p; i++) phi[i] = params[i];
  for (let i = 0; i < o.q; i++) theta[i] = params[o.p + i];
  // (1 - sum a_i B^i)(1 - sum A_j B^(mj)) and (1 + sum b_i B^i)(1 + sum B_j B^(mj)).
  for (let j = 0; j < o.P; j++) {
    const A = params[sp + j];
    phi[(j + 1) * o.m - 1] += A;
    for (let i = 0; i < o.p; i++) phi[(j + 1) * o.m + i] -= params[i] * A;
  }
  for (let j = 0; j < o.Q; j++) {
    const B = params[sq + j];
    theta[(j + 1) * o.m - 1] += B;
    for (let i = 0; i < o.q; i++) theta[(j + 1) * o.m + i] += params[o.p + i] * B;
  }
  return out && out.phi === phi && out.theta === theta ? out : { phi, theta };
}

/**
 * True when 1 - c_1 z - ... - c_k z^k has every root strictly outside the circle |z| = radius
 * (Schur-Cohn step-down: all reflection coefficients inside (-1, 1)). Trailing zeros are fine.
 */
export function rootsOutside(c: ArrayLike<number>, k: number, radius = 1): boolean {
  while (k > 0 && c[k - 1] === 0) k--;
  if (k === 0) return true;
  const cur = new Float64Array(k);
  const work = new Float64Array(k);
  let s = 1;
  for (let j = 0; j < k; j++) {
    s *= radius;
    cur[j] = c[j] * s;
  }
  for (let j = k - 1; j >= 0; j--) {
    const a = cur[j];
    if (!(Math.abs(a) < 1)) return false;
    if (j === 0) break;
    const den = 1 - a * a;
    for (let i = 0; i < j; i++) work[i] = (cur[i] + a * cur[j - i - 1]) / den;
    for (let i = 0; i < j; i++) cur[i] = work[i];
  }
  return true;
}

/** Degree left once trailing coefficients with |c| <= 1e-8 are dropped (auto.arima's rule). */
export function significantDegree(c: ArrayLike<number>): number {
  let k = c.length;
  while (k > 0 && !(Math.abs(c[k - 1]) > 1e-8)) k--;
  return k;
}

/**
 * auto.arima's root test on the expanded polynomials: true when the AR polynomial 1 - sum phi
 * z^i or the MA polynomial 1 + sum theta z^i has a root with modulus below `radius`.
 */
export function hasRootWithin(phi: Float64Array, theta: Float64Array, radius: number): boolean {
  const kp = significantDegree(phi);
  if (kp > 0 && !rootsOutside(phi, kp, radius)) return true;
  const kq = significantDegree(theta);
  if (kq > 0) {
    const neg = new Float64Array(kq);
    for (let i = 0; i < kq; i++) neg[i] = -theta[i];
    if (!rootsOutside(neg, kq, radius)) return true;
  }
  return false;
}
