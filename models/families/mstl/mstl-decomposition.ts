import { stl } from '../../numerics/stl.ts';

/**
 * MSTL decomposition (Bandara, Hyndman & Bergmeir 2021) as statsforecast's `mstl` computes it: each
 * seasonal period, shortest first, extracted by STL (statsmodels' defaults, seasonal windows 11, 15,
 * 19, ...) from the series less the other components; with several periods the pass runs twice. The
 * trend is the last STL's. Periods that do not fit twice in the history are left out, as R's mstl
 * does: docs/decisions/010-mstl-follows-statsforecast.md.
 */

export interface Mstl {
  /** The periods kept, ascending, each with its seasonal component (aligned with the history). */
  readonly seasonals: readonly { readonly period: number; readonly values: Float64Array }[];
  readonly trend: Float64Array;
  /** The series less every seasonal component: trend + remainder, what the trend model forecasts. */
  readonly adjusted: Float64Array;
}

/** The periods MSTL can use on a history of length n: whole, at least 2, fitting twice, distinct, ascending. */
export function usablePeriods(periods: readonly number[], n: number): number[] {
  return [...new Set(periods.map((p) => Math.round(p)))].filter((p) => p >= 2 && 2 * p < n).sort((a, b) => a - b);
}

export function mstlDecompose(y: Float64Array, periods: readonly number[]): Mstl {
  const kept = usablePeriods(periods, y.length);
  if (kept.length === 0) return { seasonals: [], trend: y.slice(), adjusted: y.slice() };
  const iterations = kept.length === 1 ? 1 : 2;
  const seasonals = kept.map((period) => ({ period, values: new Float64Array(y.length) }));
  const deseasoned = y.slice();
  let trend: Float64Array = new Float64Array(y.length);
  for (let pass = 0; pass < iterations; pass++) {
    seasonals.forEach((component, i) => {
      // Put this component back, re-estimate it from what the others leave, take it out again.
      for (let t = 0; t < y.length; t++) deseasoned[t] += component.values[t];
      const fit = stl(deseasoned, component.period, { seasonalWindow: 7 + 4 * (i + 1), defaults: 'statsmodels' });
      component.values.set(fit.seasonal);
      for (let t = 0; t < y.length; t++) deseasoned[t] -= component.values[t];
      trend = fit.trend;
    });
  }
  return { seasonals, trend, adjusted: deseasoned };
}

/** Each seasonal component's last cycle repeated over the horizon, summed (seasonal naive per component). */
export function seasonalForecast(decomposition: Mstl, horizon: number): Float64Array {
  const out = new Float64Array(horizon);
  for (const { period, values } of decomposition.seasonals) {
    const lastCycle = values.length - period;
    for (let j = 0; j < horizon; j++) out[j] += values[lastCycle + (j % period)];
  }
  return out;
}
