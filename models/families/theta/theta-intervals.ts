/**
 * Theta's predictive distribution as statsforecast's AutoTheta draws it: sample paths where each
 * step adds a Gaussian error (sigma from the one-step residuals after the first three) and updates
 * level, mean and trend with the drawn value; the quantiles are the paths' empirical quantiles
 * (numpy's linear rule). More paths than the reference, from a fixed seed:
 * docs/decisions/011-theta-follows-autotheta.md.
 */
import { sortedQuantile } from '../../numerics/empirical-quantile.ts';
import { normalSampler, rng } from '../../numerics/random.ts';
import { oneStep, type ThetaFit } from './theta-estimation.ts';

const PATHS = 1000;
const SEED = 0x7e7a;

/** Sample standard deviation of the residuals after the first three (all of them if too few). */
export function residualSigma(residuals: Float64Array): number {
  const tail = residuals.length - 3 >= 2 ? residuals.subarray(3) : residuals;
  if (tail.length < 2) return 0;
  let mean = 0;
  for (const e of tail) mean += e;
  mean /= tail.length;
  let sum = 0;
  for (const e of tail) sum += (e - mean) * (e - mean);
  return Math.sqrt(sum / (tail.length - 1));
}

/** Simulated paths, path-major: paths[p * horizon + j]. */
export function simulatePaths(fit: ThetaFit, horizon: number, sigma: number): Float64Array {
  const normal = normalSampler(rng(SEED));
  const paths = new Float64Array(PATHS * horizon);
  const { alpha } = fit.parameters;
  for (let p = 0; p < PATHS; p++) {
    // The reference updates the trend dynamically along every path, whatever the variant.
    const s = { ...fit.last };
    for (let j = 0; j < horizon; j++) {
      const i = fit.n + j;
      const value = oneStep(s, i, fit.parameters) + sigma * normal();
      paths[p * horizon + j] = value;
      const previousMean = s.meanY;
      s.level = alpha * value + (1 - alpha) * s.level;
      s.meanY = (i * previousMean + value) / (i + 1);
      // Unlike the fit's update, the reference's paths take the slope from the updated mean.
      s.b = ((i - 1) * s.b + (6 * (value - s.meanY)) / (i + 1)) / (i + 2);
      s.a = s.meanY - (s.b * (i + 2)) / 2;
    }
  }
  return paths;
}

/** Empirical quantiles of each step's values across paths (numpy's linear method). */
export function pathQuantiles(paths: Float64Array, horizon: number, levels: readonly number[]): Float64Array[] {
  const count = paths.length / horizon;
  const out = levels.map(() => new Float64Array(horizon));
  const column = new Float64Array(count);
  for (let j = 0; j < horizon; j++) {
    for (let p = 0; p < count; p++) column[p] = paths[p * horizon + j];
    column.sort();
    levels.forEach((level, k) => {
      out[k][j] = sortedQuantile(column, level);
    });
  }
  return out;
}
