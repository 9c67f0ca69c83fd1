import type { ForecastOutput } from '../models/contract/model-interface.ts';
import type { Freq } from './frequencies.ts';
import { computeMetrics } from './accuracy-metrics.ts';
import { quantileKey } from './quantile-key.ts';
import type { InputSerie } from './request-schema.ts';
import type { Metrics, Prediction } from './response-schema.ts';
import { buildFutureIndex } from './time-index.ts';

/**
 * Timestamps of steps fcd..fcd+horizon-1: the input's own index entries where they exist,
 * then the index continued past its end on the frequency's calendar grid.
 */
export function forecastIndex(serie: InputSerie, fcd: number, horizon: number, freq: Freq): string[] {
  const n = serie.index.length;
  const known = serie.index.slice(fcd, Math.min(n, fcd + horizon));
  const beyond = fcd + horizon - Math.max(n, fcd);
  return beyond > 0 ? known.concat(buildFutureIndex(serie.index[n - 1], freq, beyond)) : known;
}

/** A plain loop: Array.from over a typed array goes through its iterator, much slower for a horizon's values. */
function toNumbers(values: Float64Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < values.length; i++) out.push(values[i]);
  return out;
}

export function buildPrediction(serie: InputSerie, fcd: number, horizon: number, freq: Freq, levels: readonly number[], output: ForecastOutput): Prediction {
  const prediction: Prediction['prediction'] = { mean: toNumbers(output.mean) };
  levels.forEach((level, k) => {
    prediction[quantileKey(level)] = toNumbers(output.quantiles[k]);
  });
  // Steps whose true value is in the target are scored; a pure forecast has none.
  const knownSteps = Math.max(0, Math.min(horizon, serie.target.length - fcd));
  let metrics: Metrics | null = null;
  if (knownSteps > 0) {
    const actual = serie.target.slice(fcd, fcd + knownSteps);
    metrics = computeMetrics(
      actual,
      output.mean.subarray(0, knownSteps),
      levels,
      output.quantiles.map((q) => q.subarray(0, knownSteps)),
    );
  }
  return { prediction, index: forecastIndex(serie, fcd, horizon, freq), metrics };
}
