/**
 * Forecast means and variances of a fitted ETS model, in closed form, for the three model classes
 * of Hyndman, Koehler, Ord & Snyder (2008, ch. 6) that R's `forecast.ets` treats analytically. With
 * R's defaults every selectable model is in one of them, so no simulation is ever needed. Two
 * deliberate choices between R forecast 8.20 and the textbook are stated at `predictive`; why R's
 * formulas are kept: docs/decisions/008-aets-estimates-as-statsforecast.md.
 */
import { ADDITIVE, MULTIPLICATIVE, NONE, type EtsFit } from './ets-types.ts';

export interface Predictive {
  readonly mean: Float64Array;
  readonly variance: Float64Array;
}

interface LinearForecast {
  readonly mean: Float64Array;
  /** c_j = w' F^(j-1) g, j = 1..h-1: the weight of the innovation j steps back. */
  readonly c: Float64Array;
}

/**
 * Linear-model forecasts mu_h = w' F^(h-1) x and innovation weights c_j, built from R's state
 * layout [l, b?, s1..sm].
 */
function linearForecast(fit: EtsFit, h: number): LinearForecast {
  const x = fit.lastState;
  const p = x.length;
  const { alpha, beta, gamma, phi } = fit.params;
  const hasTrend = fit.spec.trend !== NONE;
  const seasonal = fit.spec.season === ADDITIVE;
  const m = fit.m;
  const damp = fit.spec.damped ? phi : 1;

  const w = new Float64Array(p);
  const F = new Float64Array(p * p); // row-major
  const g = new Float64Array(p);
  w[0] = 1;
  F[0] = 1;
  g[0] = alpha;
  if (hasTrend) {
    w[1] = damp;
    F[1] = damp;
    F[p + 1] = damp;
    g[1] = beta;
  }
  if (seasonal) {
    const s1 = p - m;
    w[p - 1] = 1;
    F[s1 * p + (p - 1)] = 1; // new s1 = old sm
    for (let i = 0; i < m - 1; i++) F[(s1 + 1 + i) * p + s1 + i] = 1; // s(j+1) = sj
    g[s1] = gamma;
  }

  const mean = new Float64Array(h);
  const c = new Float64Array(Math.max(0, h - 1));
  let row = Float64Array.from(w); // w' F^j
  const next = new Float64Array(p);
  for (let j = 0; j < h; j++) {
    let mu = 0;
    let cj = 0;
    for (let i = 0; i < p; i++) {
      mu += row[i] * x[i];
      cj += row[i] * g[i];
    }
    mean[j] = mu;
    if (j < h - 1) c[j] = cj;
    next.fill(0);
    for (let i = 0; i < p; i++) {
      const r = row[i];
      if (r === 0) continue;
      for (let k = 0; k < p; k++) next[k] += r * F[i * p + k];
    }
    row = Float64Array.from(next);
  }
  return { mean, c };
}

/** Class 1: var_h = sigma^2 (1 + sum_{j<h} c_j^2). */
function class1(fit: EtsFit, h: number): Predictive {
  const { mean, c } = linearForecast(fit, h);
  const variance = new Float64Array(h);
  let acc = 1;
  variance[0] = fit.sigma2;
  for (let j = 1; j < h; j++) {
    acc += c[j - 1] * c[j - 1];
    variance[j] = fit.sigma2 * acc;
  }
  return { mean, variance };
}

/** Class 2: theta_h = mu_h^2 + sigma^2 sum_j c_j^2 theta_(h-j); var_h = (1 + sigma^2) theta_h - mu_h^2. */
function class2(fit: EtsFit, h: number): Predictive {
  const { mean, c } = linearForecast(fit, h);
  const s2 = fit.sigma2;
  const theta = new Float64Array(h);
  const variance = new Float64Array(h);
  for (let j = 0; j < h; j++) {
    let sum = 0;
    for (let i = 1; i <= j; i++) sum += c[i - 1] * c[i - 1] * theta[j - i];
    theta[j] = mean[j] * mean[j] + s2 * sum;
    variance[j] = (1 + s2) * theta[j] - mean[j] * mean[j];
  }
  return { mean, variance };
}

/** A sparse matrix as a list of entries: the class 3 transition matrices are mostly zeros. */
interface Sparse {
  readonly row: Int32Array;
  readonly col: Int32Array;
  readonly val: Float64Array;
}

function sparseFrom(entries: Array<[number, number, number]>): Sparse {
  const kept = entries.filter((e) => e[2] !== 0);
  return {
    row: Int32Array.from(kept, (e) => e[0]),
    col: Int32Array.from(kept, (e) => e[1]),
    val: Float64Array.from(kept, (e) => e[2]),
  };
}

/** Kronecker product A (x) B of dense row-major matrices. */
function kron(a: number[][], b: number[][]): Array<[number, number, number]> {
  const out: Array<[number, number, number]> = [];
  const rb = b.length;
  const cb = b[0].length;
  a.forEach((arow, i) =>
    arow.forEach((av, j) => {
      if (av === 0) return;
      b.forEach((brow, k) => brow.forEach((bv, l) => out.push([i * rb + k, j * cb + l, av * bv])));
    }),
  );
  return out;
}

/** out += scale * S A T' for sparse S, T and dense d x d A. */
function addSandwich(out: Float64Array, s: Sparse, a: Float64Array, t: Sparse, d: number, scale: number): void {
  for (let p = 0; p < s.val.length; p++) {
    const r = s.row[p];
    const i = s.col[p];
    const sv = s.val[p] * scale;
    for (let q = 0; q < t.val.length; q++) {
      out[r * d + t.row[q]] += sv * t.val[q] * a[i * d + t.col[q]];
    }
  }
}

/**
 * Class 3 (Hyndman et al. 2008, section 6.4): the state is carried as M = (l, b)' (s1..sm), whose
 * mean and covariance of vec(M) are propagated exactly; R's formulation, matrices included.
 */
function class3(fit: EtsFit, h: number): Predictive {
  const x = fit.lastState;
  const m = fit.m;
  const k = fit.spec.trend === NONE ? 1 : 2;
  const { alpha, beta, gamma, phi } = fit.params;
  const s2 = fit.sigma2;
  const d = k * m;

  const F1 =
    k === 1
      ? [[1]]
      : [
          [1, 1],
          [0, fit.spec.damped ? phi : 1],
        ];
  const G1 =
    k === 1
      ? [[alpha]]
      : [
          [alpha, alpha],
          [beta, beta],
        ];
  const F2: number[][] = Array.from({ length: m }, (_, i) => Array.from({ length: m }, (_, j) => (i === 0 ? (j === m - 1 ? 1 : 0) : j === i - 1 ? 1 : 0)));
  const G2: number[][] = Array.from({ length: m }, (_, i) => Array.from({ length: m }, (_, j) => (i === 0 && j === m - 1 ? gamma : 0)));
  const F21 = sparseFrom(kron(F2, F1));
  const G21 = sparseFrom(kron(G2, G1));
  const K = sparseFrom([...kron(G2, F1), ...kron(F2, G1)]);

  // M[i][j] = (level/slope)_i * s_(j+1); stored row-major k x m.
  let M = new Float64Array(k * m);
  for (let i = 0; i < k; i++) for (let j = 0; j < m; j++) M[i * m + j] = x[i] * x[k + j];
  let V = new Float64Array(d * d);
  const vec = new Float64Array(d);
  const w1 = new Float64Array(d * d);
  const w2 = new Float64Array(d * d);

  const mean = new Float64Array(h);
  const variance = new Float64Array(h);
  for (let step = 0; step < h; step++) {
    let mu = 0;
    for (let i = 0; i < k; i++) mu += M[i * m + (m - 1)];
    let hvh = 0;
    const last = (m - 1) * k;
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) hvh += V[(last + i) * d + last + j];
    mean[step] = mu;
    variance[step] = (1 + s2) * hvh + s2 * mu * mu;

    // vec() is column-major: entry (i, j) of M goes to j*k + i.
    for (let j = 0; j < m; j++) for (let i = 0; i < k; i++) vec[j * k + i] = M[i * m + j];
    for (let a = 0; a < d; a++) {
      for (let b = 0; b < d; b++) {
        const vv = vec[a] * vec[b];
        w1[a * d + b] = V[a * d + b] + vv;
        w2[a * d + b] = 3 * V[a * d + b] + 2 * vv;
      }
    }
    const next = new Float64Array(d * d);
    addSandwich(next, F21, V, F21, d, 1);
    addSandwich(next, F21, V, G21, d, s2);
    addSandwich(next, G21, V, F21, d, s2);
    addSandwich(next, K, w1, K, d, s2);
    addSandwich(next, G21, w2, G21, d, s2 * s2);
    V = next;

    // M <- F1 M F2' + sigma^2 G1 M G2'
    const nextM = new Float64Array(k * m);
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < m; j++) {
        let acc = 0;
        for (let a = 0; a < k; a++) {
          const f = F1[i][a];
          const g = G1[i][a];
          for (let b = 0; b < m; b++) {
            const mab = M[a * m + b];
            acc += f * mab * F2[j][b] + s2 * g * mab * G2[j][b];
          }
        }
        nextM[i * m + j] = acc;
      }
    }
    M = nextM;
  }
  return { mean, variance };
}

/**
 * Means and variances for steps 1..h, by the model's class:
 *   class 1: additive error, additive/no trend and season (linear homoscedastic);
 *   class 2: multiplicative error, additive/no trend and season (linear, heteroscedastic);
 *   class 3: multiplicative error and season, additive/no trend.
 * Class 3 keeps R's mean (which includes the sigma^2 terms) and R's matrices, whose damped variant
 * uses H1 = (1, 1) and F1 = [[1, 1], [0, phi]]: the point forecast of ETS(M,Ad,M) is then
 * (l + (1 + phi + ... + phi^(h-1)) b) s rather than (l + (phi + ... + phi^h) b) s. Class 1 puts
 * gamma on the newest seasonal state, as the book and the current R forecast do (8.20 put it on
 * the third state, which for models without trend is the wrong season).
 */
export function predictive(fit: EtsFit, h: number): Predictive {
  const { error, season } = fit.spec;
  if (error === ADDITIVE && season !== MULTIPLICATIVE) return class1(fit, h);
  if (error === MULTIPLICATIVE && season !== MULTIPLICATIVE) return class2(fit, h);
  if (error === MULTIPLICATIVE && season === MULTIPLICATIVE) return class3(fit, h);
  throw new Error(`no analytic forecast variance for ${fit.method}`);
}
