import type { Metrics } from '../types.ts';

/** Values at instants (epoch milliseconds); null where a value is missing. */
export interface Points {
  x: number[];
  y: (number | null)[];
}

/** One forecast, made at `createdAt` (the last observation it saw). */
export interface FanForecast {
  label: string;
  createdAt: number;
  x: number[];
  mean: number[];
  /** By level, as the API keys them ("0.1"). */
  quantiles: Record<string, number[]>;
  metrics?: Metrics | null;
}

/** What one fan chart shows: the observed series (history, and the actuals after it) and forecasts. */
export interface FanView {
  observed: Points | null;
  forecasts: FanForecast[];
}

/**
 * Quantile levels as the bands of a fan: each level below the median paired with its mirror
 * (0.1 with 0.9), outermost first; levels without a mirror are drawn as lines of their own.
 */
export function fanLevels(keys: string[]): { bands: [string, string][]; lines: string[] } {
  const levels = keys.map((k) => ({ key: k, level: Number(k) })).sort((a, b) => a.level - b.level);
  const bands: [string, string][] = [];
  const paired = new Set<string>();
  for (const low of levels) {
    if (low.level >= 0.5) break;
    const high = levels.find((h) => Math.abs(h.level - (1 - low.level)) < 1e-9);
    if (!high) continue;
    bands.push([low.key, high.key]);
    paired.add(low.key).add(high.key);
  }
  return { bands, lines: levels.filter((l) => !paired.has(l.key)).map((l) => l.key) };
}

/** "80% (0.1–0.9)" */
export const bandLabel = ([low, high]: [string, string]): string => `${Math.round((Number(high) - Number(low)) * 100)}% (${low}–${high})`;
