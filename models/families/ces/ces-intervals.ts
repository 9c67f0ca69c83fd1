/**
 * CES's predictive spread as statsforecast's AutoCES defines it, without its sampling noise. The
 * reference's paths from normally perturbed final states are exactly normal around the mean
 * forecast (it is linear in its starting states), so this returns the normal quantiles they converge
 * to, from the forecast's response to a unit change of each starting state. Why:
 * docs/decisions/009-ces-follows-autoces.md.
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
