import { crps } from '../../../engine/accuracy-metrics.ts';
import { seasonalNaive } from '../../../models/families/naive/naive.ts';
import type { ForecastOutput, ForecastTask } from '../../../models/contract/model-interface.ts';
import type { M4Series } from '../../../datasets/m4.ts';
import { mase, maseScale, smape } from '../m4-scores.ts';

/** How the accuracy benchmark scores a forecast of an M4 series, and sums the scores of a model up. */

/** Quantile levels every model is asked for and CRPS is computed on: 0.05, 0.10, ..., 0.95. */
export const QUANTILE_GRID: readonly number[] = Array.from({ length: 19 }, (_, i) => Math.round((i + 1) * 5) / 100);

export interface SeriesScore {
  readonly smape: number;
  /** Null when the series' MASE scale is zero. */
  readonly mase: number | null;
  readonly crps: number;
  /** CRPS over MASE's scale (null where that is zero): comparable across series of any size. */
  readonly scaledCrps: number | null;
  /** Share of the test points inside the 80% interval (the 0.1 and 0.9 quantiles). */
  readonly coverage80: number;
}

const LOW_80 = QUANTILE_GRID.findIndex((q) => Math.abs(q - 0.1) < 1e-9);
const HIGH_80 = QUANTILE_GRID.findIndex((q) => Math.abs(q - 0.9) < 1e-9);

/** Why an output cannot be scored, or null when it can. */
export function invalidOutput(out: ForecastOutput | undefined, h: number, k: number): string | null {
  if (!out || !(out.mean instanceof Float64Array || Array.isArray(out.mean))) return 'no mean';
  if (out.mean.length !== h) return `mean has ${out.mean.length} steps, expected ${h}`;
  if (!out.mean.every(Number.isFinite)) return 'non-finite mean';
  if (!Array.isArray(out.quantiles) || out.quantiles.length !== k) return `expected ${k} quantile arrays`;
  for (const q of out.quantiles) {
    if (!q || q.length !== h || !q.every(Number.isFinite)) return 'non-finite or mis-sized quantiles';
  }
  return null;
}

export function score(s: M4Series, out: ForecastOutput): SeriesScore {
  const c = crps(s.test, QUANTILE_GRID, out.quantiles);
  if (c === null) throw new Error(`CRPS undefined for ${s.id}`);
  let inside = 0;
  s.test.forEach((y, t) => {
    if (out.quantiles[LOW_80][t] <= y && y <= out.quantiles[HIGH_80][t]) inside++;
  });
  const scale = maseScale(s.train, s.seasonLength);
  return {
    smape: smape(s.test, out.mean),
    mase: mase(s.train, s.test, out.mean, s.seasonLength),
    crps: c,
    scaledCrps: scale > 0 ? c / scale : null,
    coverage80: inside / s.test.length,
  };
}

/** Seasonal naive at the file's freq: the stand-in for a series a model failed on. */
export function fallbackScore(s: M4Series, cache: Map<string, SeriesScore>): SeriesScore {
  let sc = cache.get(s.id);
  if (!sc) {
    const task: ForecastTask = { history: s.train, horizon: s.horizon, quantiles: QUANTILE_GRID, seasonLength: s.seasonLength };
    sc = score(s, seasonalNaive(task, s.seasonLength));
    cache.set(s.id, sc);
  }
  return sc;
}

export interface Summary {
  readonly label: string;
  readonly series: number;
  readonly failed: number;
  readonly firstErrors: string[];
  readonly smape: number;
  readonly mase: number;
  /** Series left out of the MASE mean because their scale is zero. */
  readonly maseUndefined: number;
  readonly crps: number;
  /** Mean CRPS over MASE's scale, of the series where that is not zero. */
  readonly scaledCrps: number;
  /** Share of all test points inside the 80% interval (every series has the same horizon). */
  readonly coverage80: number;
  /** Mean and median of fit + forecast wall time per series, milliseconds. */
  readonly msMean: number;
  readonly msMedian: number;
  /** Mean CPU time (user + system) of fit + forecast per series, milliseconds. */
  readonly cpuMsMean: number;
}

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function summarize(label: string, scores: SeriesScore[], ms: number[], cpuMs: number[], errors: string[]): Summary {
  const maseValues = scores.map((s) => s.mase).filter((m): m is number => m !== null);
  return {
    label,
    series: scores.length,
    failed: errors.length,
    firstErrors: errors.slice(0, 3),
    smape: mean(scores.map((s) => s.smape)),
    mase: mean(maseValues),
    maseUndefined: scores.length - maseValues.length,
    crps: mean(scores.map((s) => s.crps)),
    scaledCrps: mean(scores.map((s) => s.scaledCrps).filter((c): c is number => c !== null)),
    coverage80: mean(scores.map((s) => s.coverage80)),
    msMean: mean(ms),
    msMedian: median(ms),
    cpuMsMean: mean(cpuMs),
  };
}
