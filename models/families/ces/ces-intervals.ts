/**
 * CES's predictive spread, as statsforecast's AutoCES defines it, without its sampling noise.
 *
 * The reference (`_simulate_pred_intervals`) draws 5,000 paths: each adds independent N(0, sigma2)
 * noise to every entry of the final state matrix, runs the mean forecast from the perturbed states
 * and takes the paths' empirical quantiles. That forecast is linear in the m state rows it starts
 * from (the fed-back error is zero), so each path's step-h value is the mean forecast plus a
 * weighted sum of independent normals: exactly normal, with variance sigma2 times the sum of the
 * squared weights. We compute those weights (the forecast's response to a unit change of each
 * starting state) and return the normal quantiles the reference's simulation converges to, which
 * makes them deterministic and cheap; the reference's own bounds scatter around them by its
 * Monte Carlo error (about 2.5% of a standard deviation for an 80% bound).
 */
import type { CesFit } from './ces-estimation.ts';
import { forecastFrom, type StateMatrix } from './recursion.ts';

/** The standard deviation of each horizon step's forecast under the reference's state noise. */
export function forecastSd(fit: CesFit, h: number): Float64Array {
  const { k, m, season } = fit.states;
  const weights = new Float64Array(h);
  const squares = new Float64Array(h);
  const impulse: StateMatrix = { values: new Float64Array(m * k), k, m, season };
  const buf: StateMatrix = { values: new Float64Array((m + h) * k), k, m, season };
  for (let j = 0; j < m * k; j++) {
    impulse.values.fill(0);
    impulse.values[j] = 1;
    forecastFrom(impulse, m, fit.parameters, h, weights, buf);
    for (let t = 0; t < h; t++) squares[t] += weights[t] * weights[t];
  }
  const sigma = Math.sqrt(fit.sigma2);
  return squares.map((s) => sigma * Math.sqrt(s));
}
