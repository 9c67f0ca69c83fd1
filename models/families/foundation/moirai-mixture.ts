/**
 * Moirai-MoE's predictive distribution (uni2ts 2.0.0): AffineTransformed(Mixture[StudentT, Normal
 * of fixed scale, NegativeBinomial, LogNormal], loc, scale), from the parameters the exported graph
 * gives per forecast step (tools/export/moirai_moe.py's channels): its CDF, its quantiles by
 * bisection, its mean, and draws from it, in uni2ts's parameterisations.
 */

/** One step's parameters: the graph's 14 channels (weights logits 0-3, components 4-11, loc 12, scale 13). */
export type MixtureParams = ArrayLike<number>;

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Γ(x) for x > 0 (Lanczos, g = 7): about 1e-15 relative. */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let sum = LANCZOS[0];
  for (let i = 1; i < 9; i++) sum += LANCZOS[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** erfc(x): the power series of erf below 2.5, the continued fraction of erfc above. */
export function erfc(x: number): number {
  if (x < 0) return 2 - erfc(-x);
  if (x < 2.5) {
    let term = x;
    let sum = x;
    for (let n = 1; n < 200; n++) {
      term *= (-x * x) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(x) = exp(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))), by Lentz's method.
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let n = 1; n < 500; n++) {
    const a = n / 2;
    d = x + a * d;
    d = 1 / (Math.abs(d) < tiny ? tiny : d);
    c = x + a / c;
    if (Math.abs(c) < tiny) c = tiny;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

/** The standard normal CDF. */
export const normalCdf = (z: number): number => 0.5 * erfc(-z / Math.SQRT2);

/** Continued fraction of the incomplete beta (modified Lentz), for x < (a + 1) / (a + b + 2). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let h = d;
  for (let m = 1; m <= 1000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    d = 1 / (Math.abs(d) < tiny ? tiny : d);
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    d = 1 / (Math.abs(d) < tiny ? tiny : d);
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return h;
}

/** The regularized incomplete beta I_x(a, b). */
export function incompleteBeta(a: number, b: number, x: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(a, b, x)) / a;
  return 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** Student-t CDF of (df, loc, scale). */
export function studentTCdf(x: number, df: number, loc: number, scale: number): number {
  const t = (x - loc) / scale;
  const tail = 0.5 * incompleteBeta(df / 2, 0.5, df / (df + t * t));
  return t > 0 ? 1 - tail : tail;
}

/**
 * NegativeBinomial(total_count r, logits l) CDF at a real value: its counts up to floor(x). It is
 * Poisson(Gamma(r, rate e^-l)), whose CDF at k is I_p(r, k + 1) with p = sigmoid(-l).
 */
export function negativeBinomialCdf(x: number, totalCount: number, logits: number): number {
  if (x < 0) return 0;
  return incompleteBeta(totalCount, Math.floor(x) + 1, 1 / (1 + Math.exp(logits)));
}

const softmax = (p: MixtureParams): [number, number, number, number] => {
  const top = Math.max(p[0], p[1], p[2], p[3]);
  const e = [Math.exp(p[0] - top), Math.exp(p[1] - top), Math.exp(p[2] - top), Math.exp(p[3] - top)];
  const total = e[0] + e[1] + e[2] + e[3];
  return [e[0] / total, e[1] / total, e[2] / total, e[3] / total];
};

/** P(Y <= y) of the step's distribution; `normalScale` is the Normal component's fixed scale. */
export function mixtureCdf(p: MixtureParams, y: number, normalScale: number): number {
  const w = softmax(p);
  const z = (y - p[12]) / p[13];
  const t = studentTCdf(z, p[4], p[5], p[6]);
  const n = normalCdf((z - p[7]) / normalScale);
  const nb = negativeBinomialCdf(z, p[8], p[9]);
  const ln = z <= 0 ? 0 : normalCdf((Math.log(z) - p[10]) / p[11]);
  return w[0] * t + w[1] * n + w[2] * nb + w[3] * ln;
}

/** The smallest y with CDF(y) >= level (bisection to the last double, as the fixture records it). */
export function mixtureQuantile(p: MixtureParams, level: number, normalScale: number): number {
  let lo = p[12] - p[13];
  let hi = p[12] + p[13];
  for (let i = 0; i < 200 && mixtureCdf(p, lo, normalScale) >= level; i++) lo -= 2 * (hi - lo);
  for (let i = 0; i < 200 && mixtureCdf(p, hi, normalScale) < level; i++) hi += 2 * (hi - lo);
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (mid <= lo || mid >= hi) break;
    if (mixtureCdf(p, mid, normalScale) >= level) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The distribution's mean (uni2ts's Mixture.mean through the affine transform). */
export function mixtureMean(p: MixtureParams): number {
  const w = softmax(p);
  const base = w[0] * p[5] + w[1] * p[7] + w[2] * p[8] * Math.exp(p[9]) + w[3] * Math.exp(p[10] + (p[11] * p[11]) / 2);
  return p[12] + p[13] * base;
}

/** A seeded generator of uniforms in (0, 1) (sfc32, seeded by splitmix32). */
export function uniforms(seed: number): () => number {
  let s = seed >>> 0;
  const next32 = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = next32();
  let b = next32();
  let c = next32();
  let d = next32();
  const sfc32 = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  return () => (sfc32() * 2 ** 21 + (sfc32() >>> 11) + 0.5) / 2 ** 53;
}

/** Draws of the distributions the mixture is made of, from one uniform stream. */
export class Sampler {
  constructor(private readonly uniform: () => number) {}

  normal(): number {
    return Math.sqrt(-2 * Math.log(this.uniform())) * Math.cos(2 * Math.PI * this.uniform());
  }

  /** Gamma(shape, 1): Marsaglia and Tsang, boosted below shape 1. */
  gamma(shape: number): number {
    if (shape < 1) return this.gamma(shape + 1) * Math.pow(this.uniform(), 1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      const x = this.normal();
      const v = (1 + c * x) ** 3;
      if (v <= 0) continue;
      const u = this.uniform();
      if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
    }
  }

  /** Poisson(rate): multiplication below 10, Hörmann's PTRS above (numpy's choice). */
  poisson(rate: number): number {
    if (rate <= 0) return 0;
    if (rate < 10) {
      const limit = Math.exp(-rate);
      let k = 0;
      for (let prod = this.uniform(); prod > limit; prod *= this.uniform()) k++;
      return k;
    }
    const slam = Math.sqrt(rate);
    const loglam = Math.log(rate);
    const b = 0.931 + 2.53 * slam;
    const a = -0.059 + 0.02483 * b;
    const invalpha = 1.1239 + 1.1328 / (b - 3.4);
    const vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      const u = this.uniform() - 0.5;
      const v = this.uniform();
      const us = 0.5 - Math.abs(u);
      const k = Math.floor(((2 * a) / us + b) * u + rate + 0.43);
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (Math.log(v) + Math.log(invalpha) - Math.log(a / (us * us) + b) <= -rate + k * loglam - logGamma(k + 1)) return k;
    }
  }

  /** One draw of the step's distribution: a component by its weight, then its draw, then loc + scale * x. */
  mixture(p: MixtureParams, normalScale: number): number {
    const w = softmax(p);
    const u = this.uniform();
    let x: number;
    if (u < w[0]) x = p[5] + p[6] * this.normal() * Math.sqrt(p[4] / (2 * this.gamma(p[4] / 2)));
    else if (u < w[0] + w[1]) x = p[7] + normalScale * this.normal();
    else if (u < w[0] + w[1] + w[2]) x = this.poisson(this.gamma(p[8]) * Math.exp(p[9]));
    else x = Math.exp(p[10] + p[11] * this.normal());
    return p[12] + p[13] * x;
  }
}
