import { cssMeanSquare, differenceForCss, sparsePoly, type SparsePoly } from './css.ts';
import { gainRecord, kalmanLikelihood, kalmanReplay, type GainRecord } from './kalman.ts';
import { removeRegression } from './regression.ts';
import { makeStateSpace, resetStateSpace, type ArimaStateSpace } from './arima-state-space.ts';
import { armaCount, expandArma, type ArmaOrders, type ExpandedArma } from './transform.ts';

/** Objective factory shared by the CSS and likelihood optimisations. */
export class ArimaObjectives {
  readonly n: number;
  private readonly work: Float64Array;
  private readonly w: Float64Array;
  private readonly resid: Float64Array;
  private readonly par: Float64Array;
  private readonly narma: number;
  // Buffers every evaluation writes into: the optimisers call an objective thousands of times
  // per fit, and fresh typed arrays for these small vectors showed in the profile.
  private readonly arma: ExpandedArma;
  private readonly mapped: Float64Array;
  private readonly sparsePhi: SparsePoly;
  private readonly sparseTheta: SparsePoly;
  private cachedW = false;
  private ss: ArimaStateSpace | null = null;
  /**
   * With regressors: the filter's gains of the last model run, for the next call with the same
   * phi and theta (differences in the regression coefficients) to reuse.
   */
  private readonly gains: GainRecord | null;
  private gainsFor: { phi: Float64Array; theta: Float64Array } | null = null;

  constructor(
    private readonly x: Float64Array,
    private readonly o: ArmaOrders,
    private readonly cols: readonly Float64Array[],
    private readonly base: Float64Array,
    private readonly mask: readonly boolean[],
    private readonly delta: Float64Array,
  ) {
    this.n = x.length;
    this.work = new Float64Array(this.n);
    this.w = new Float64Array(this.n);
    this.resid = new Float64Array(this.n);
    this.par = new Float64Array(base.length);
    this.narma = armaCount(o);
    this.arma = { phi: new Float64Array(o.p + o.m * o.P), theta: new Float64Array(o.q + o.m * o.Q) };
    this.mapped = new Float64Array(base.length);
    this.sparsePhi = sparsePoly(this.arma.phi);
    this.sparseTheta = sparsePoly(this.arma.theta);
    this.gains = cols.length > 0 ? gainRecord() : null;
  }

  private fill(p: ArrayLike<number>): Float64Array {
    const par = this.par;
    par.set(this.base);
    let k = 0;
    for (let i = 0; i < par.length; i++) if (this.mask[i]) par[i] = p[k++];
    return par;
  }

  /** 0.5 log(mean squared conditional residual). */
  css(ncond: number): (p: Float64Array) => number {
    return (p) => {
      const par = this.fill(p);
      const { phi, theta } = expandArma(par, this.o, false, this.arma);
      if (this.cols.length > 0 || !this.cachedW) {
        removeRegression(this.x, this.cols, par, this.narma, this.work);
        differenceForCss(this.work, this.o, this.w);
        this.cachedW = this.cols.length === 0;
      }
      const res = cssMeanSquare(this.w, this.n, sparsePoly(phi, this.sparsePhi), sparsePoly(theta, this.sparseTheta), theta.length, ncond, this.resid);
      return 0.5 * Math.log(res);
    };
  }

  /** Concentrated negative log-likelihood per observation, 0.5 (log(s2) + sumlog / nu). */
  likelihood(transform: boolean): (p: Float64Array) => number {
    return (p) => {
      const par = this.fill(p);
      const { phi, theta } = expandArma(par, this.o, transform, this.arma, this.mapped);
      const r = Math.max(phi.length, theta.length + 1);
      if (r > 350) return Number.MAX_VALUE;
      removeRegression(this.x, this.cols, par, this.narma, this.work);
      let ss = this.ss;
      let sums;
      if (ss && this.gainsFor && same(this.gainsFor.phi, phi) && same(this.gainsFor.theta, theta)) {
        // Only the regression coefficients moved: the same model, other data.
        ss.a.fill(0);
        sums = kalmanReplay(this.work, ss, this.gains!);
      } else {
        if (!ss || ss.phi.length !== phi.length || ss.theta.length !== theta.length) {
          ss = makeStateSpace(phi, theta, this.delta);
          this.ss = ss;
        } else {
          ss.phi.set(phi);
          ss.theta.set(theta);
          resetStateSpace(ss);
        }
        sums = kalmanLikelihood(this.work, ss, undefined, { sumsOnly: true, record: this.gains ?? undefined });
        if (this.gains) this.gainsFor = { phi: Float64Array.from(phi), theta: Float64Array.from(theta) };
      }
      const { ssq, sumlog, nu } = sums;
      const s2 = ssq / nu;
      return 0.5 * (Math.log(s2) + sumlog / nu);
    };
  }
}

function same(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function masked(v: ArrayLike<number>, mask: readonly boolean[]): Float64Array {
  const out: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i]) out.push(v[i]);
  return Float64Array.from(out);
}
