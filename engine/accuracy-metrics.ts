import type { Metrics } from './response-schema.ts';

/**
 * Accuracy metrics over the forecast steps whose true value is known.
 * Every metric is a finite number or null: a ratio whose denominator is zero is undefined.
 * Formulas are stated in the docs/operations.md ("Metrics").
 */

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null);

/** Mean absolute error. */
export function mae(actual: ArrayLike<number>, mean: ArrayLike<number>): number | null {
  if (actual.length === 0) return null;
  let s = 0;
  for (let t = 0; t < actual.length; t++) s += Math.abs(actual[t] - mean[t]);
  return finiteOrNull(s / actual.length);
}

/** Mean absolute percentage error, as a fraction (0.05 = 5%); null when any actual is zero. */
export function mape(actual: ArrayLike<number>, mean: ArrayLike<number>): number | null {
  if (actual.length === 0) return null;
  let s = 0;
  for (let t = 0; t < actual.length; t++) {
    if (actual[t] === 0) return null;
    s += Math.abs((actual[t] - mean[t]) / actual[t]);
  }
  return finiteOrNull(s / actual.length);
}

/** Weighted absolute percentage error: sum |y - mean| / sum |y|. */
export function wape(actual: ArrayLike<number>, mean: ArrayLike<number>): number | null {
  let num = 0;
  let den = 0;
  for (let t = 0; t < actual.length; t++) {
    num += Math.abs(actual[t] - mean[t]);
    den += Math.abs(actual[t]);
  }
  return den === 0 ? null : finiteOrNull(num / den);
}

/** Scaled bias: sum (mean - y) / sum |y|; positive when the forecast runs high. */
export function scaledBias(actual: ArrayLike<number>, mean: ArrayLike<number>): number | null {
  let num = 0;
  let den = 0;
  for (let t = 0; t < actual.length; t++) {
    num += mean[t] - actual[t];
    den += Math.abs(actual[t]);
  }
  return den === 0 ? null : finiteOrNull(num / den);
}

/** Pinball (quantile) loss of one prediction at level tau. */
export function pinball(y: number, q: number, tau: number): number {
  const d = y - q;
  return d >= 0 ? tau * d : (tau - 1) * d;
}

/**
 * Continuous ranked probability score approximated from quantiles:
 * CRPS ~ (2 / K) * sum_k pinball(y, q_k, tau_k), averaged over steps.
 * Null when no quantile was predicted.
 */
export function crps(actual: ArrayLike<number>, levels: readonly number[], quantiles: readonly ArrayLike<number>[]): number | null {
  if (actual.length === 0 || levels.length === 0) return null;
  let s = 0;
  for (let k = 0; k < levels.length; k++) {
    const q = quantiles[k];
    for (let t = 0; t < actual.length; t++) s += pinball(actual[t], q[t], levels[k]);
  }
  return finiteOrNull((2 * s) / (levels.length * actual.length));
}

export function computeMetrics(
  actual: ArrayLike<number>,
  mean: ArrayLike<number>,
  levels: readonly number[],
  quantiles: readonly ArrayLike<number>[],
): Metrics {
  return {
    mae: mae(actual, mean),
    mape: mape(actual, mean),
    crps: crps(actual, levels, quantiles),
    wape: wape(actual, mean),
    scaled_bias: scaledBias(actual, mean),
  };
}
