/**
 * Bounded Nelder-Mead as statsforecast runs it (its Theta, CES and ETS fits): adaptive coefficients (Gao and Han
 * 2012), every trial point clamped into the box, a first simplex that steps each coordinate by 5%
 * (or 1e-4 from zero), and a stop once the population standard deviation of the simplex's values
 * falls under `tolStd`. Same steps, same order, so the fitted parameters match the reference's.
 */

export interface NelderMeadOptions {
  lower: Float64Array;
  upper: Float64Array;
  initStep?: number;
  zeroPert?: number;
  maxIter?: number;
  tolStd?: number;
}

export interface NelderMeadResult {
  x: Float64Array;
  value: number;
  iterations: number;
}

function clampInto(x: Float64Array, lower: Float64Array, upper: Float64Array): Float64Array {
  for (let i = 0; i < x.length; i++) x[i] = Math.min(Math.max(x[i], lower[i]), upper[i]);
  return x;
}

function populationSd(values: Float64Array): number {
  let mean = 0;
  for (const v of values) mean += v;
  mean /= values.length;
  let sum = 0;
  for (const v of values) sum += (v - mean) * (v - mean);
  return Math.sqrt(sum / values.length);
}

export function nelderMead(f: (x: Float64Array) => number, start: Float64Array, options: NelderMeadOptions): NelderMeadResult {
  const { lower, upper, initStep = 0.05, zeroPert = 1e-4, maxIter = 1000, tolStd = 1e-4 } = options;
  const n = start.length;
  const gamma = 1 + 2 / n;
  const rho = 0.75 - 1 / (2 * n);
  const sigma = 1 - 1 / n;
  const x0 = clampInto(Float64Array.from(start), lower, upper);
  const simplex: Float64Array[] = Array.from({ length: n + 1 }, () => Float64Array.from(x0));
  for (let i = 0; i < n; i++) {
    const v = simplex[i][i];
    simplex[i][i] = Math.min(Math.max(v === 0 ? zeroPert : v * (1 + initStep), lower[i]), upper[i]);
  }
  const values = Float64Array.from(simplex, (x) => f(x));
  const order = Array.from({ length: n + 1 }, (_, i) => i);
  const centroid = new Float64Array(n);
  const along = (t: number, towards: Float64Array): Float64Array => {
    const p = new Float64Array(n);
    for (let j = 0; j < n; j++) p[j] = centroid[j] + t * (towards[j] - centroid[j]);
    return clampInto(p, lower, upper);
  };
  const replaceWorst = (worst: number, x: Float64Array, value: number) => {
    simplex[worst] = x;
    values[worst] = value;
  };

  let best = 0;
  let iter = 0;
  for (; iter < maxIter; iter++) {
    order.sort((a, b) => values[a] - values[b]);
    best = order[0];
    const worst = order[n];
    const secondWorst = order[n - 1];
    if (populationSd(values) < tolStd) break;

    // Column sums less the worst row, over n: the reference's arithmetic, in its order.
    columnSums(simplex, centroid);
    for (let j = 0; j < n; j++) centroid[j] = (centroid[j] - simplex[worst][j]) / n;

    const reflected = along(-1, simplex[worst]);
    const fr = f(reflected);
    if (values[best] <= fr && fr < values[secondWorst]) {
      replaceWorst(worst, reflected, fr);
      continue;
    }
    if (fr < values[best]) {
      const expanded = along(gamma, reflected);
      const fe = f(expanded);
      if (fe < fr) replaceWorst(worst, expanded, fe);
      else replaceWorst(worst, reflected, fr);
      continue;
    }
    if (values[secondWorst] <= fr && fr < values[worst]) {
      const outside = along(rho, reflected);
      const fo = f(outside);
      if (fo <= fr) {
        replaceWorst(worst, outside, fo);
        continue;
      }
    } else {
      const inside = along(-rho, reflected);
      const fi = f(inside);
      if (fi < values[worst]) {
        replaceWorst(worst, inside, fi);
        continue;
      }
    }
    // Shrink towards the best point (which keeps its value).
    for (let i = 0; i <= n; i++) {
      if (i === best) continue;
      for (let j = 0; j < n; j++) simplex[i][j] = simplex[best][j] + sigma * (simplex[i][j] - simplex[best][j]);
      clampInto(simplex[i], lower, upper);
      values[i] = f(simplex[i]);
    }
  }
  return { x: Float64Array.from(simplex[best]), value: values[best], iterations: iter + 1 };
}

/**
 * Column sums of the simplex in the order the reference's Eigen reduction adds them: in order up
 * to four rows; from five, the first row plus blocks of four as ((a + b) + (c + d)), then the
 * rest in order. The orders differ in the last bits only, but an optimiser's path amplifies them
 * (CES's four-parameter fits moved by 1e-7 with a plain left-to-right sum).
 */
function columnSums(simplex: readonly Float64Array[], out: Float64Array): void {
  const rows = simplex.length;
  for (let j = 0; j < out.length; j++) {
    let sum = simplex[0][j];
    let i = 1;
    if (rows >= 5) for (; i + 3 < rows; i += 4) sum += simplex[i][j] + simplex[i + 1][j] + (simplex[i + 2][j] + simplex[i + 3][j]);
    for (; i < rows; i++) sum += simplex[i][j];
    out[j] = sum;
  }
}
