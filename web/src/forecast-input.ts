import type { ParsedSeries } from './csv.ts';

/** The playground's settings, as the form holds them. */
export interface Settings {
  model: string;
  horizon: number;
  freq: string;
  quantiles: number[];
  /** Backtest jobs: how many horizons at the end of each series are forecast and scored. */
  windows: number;
}

/** The most backtest windows the playground sends (its input's own maximum). */
export const MAX_WINDOWS = 100;

/** The windows field as a count the job can use: a whole number from 1 to MAX_WINDOWS, or a message. */
export function checkWindows(windows: number): string | null {
  return Number.isInteger(windows) && windows >= 1 && windows <= MAX_WINDOWS ? null : `Backtest windows: a whole number from 1 to ${MAX_WINDOWS}`;
}

/** "0.1, 0.5, 0.9" -> levels, or a message naming what is wrong. */
export function parseQuantiles(text: string): number[] | string {
  const parts = text
    .split(/[\s,;]+/)
    .map((p) => p.trim())
    .filter(Boolean);
  const levels = parts.map(Number);
  const bad = parts.find((p, i) => !(levels[i] > 0 && levels[i] < 1));
  if (bad !== undefined) return `quantiles: '${bad}' is not a level between 0 and 1`;
  return [...new Set(levels)].sort((a, b) => a - b);
}

/** POST /forecast's body: each series forecast from its end. */
export function forecastBody(series: ParsedSeries[], s: Settings) {
  return { series: series.map(({ target, index }) => ({ target, index })), horizon: s.horizon, freq: s.freq, quantiles: s.quantiles };
}

/**
 * A backtest job's body: each series forecast from `windows` creation dates, one horizon apart,
 * the last one horizon before its end, so every forecast is scored against known values.
 */
export function backtestBody(series: ParsedSeries[], s: Settings) {
  return {
    ...forecastBody(series, s),
    series: series.map(({ target, index }) => {
      const fcds = Array.from({ length: s.windows }, (_, k) => target.length - (s.windows - k) * s.horizon).filter((fcd) => fcd >= 1);
      return { target, index, fcds: fcds.length > 0 ? fcds : [Math.max(1, target.length - s.horizon)] };
    }),
  };
}

/** The stable frequencies as beta durations (the beta names a step by its length). */
const STEP: Record<string, [number, string]> = {
  '10S': [10, 's'],
  min: [1, 'min'],
  '5min': [5, 'min'],
  '10min': [10, 'min'],
  '15min': [15, 'min'],
  '30min': [30, 'min'],
  H: [1, 'h'],
  D: [1, 'd'],
  W: [1, 'w'],
  M: [1, 'mo'],
  Q: [1, 'q'],
  Y: [1, 'y'],
};

/** The inline part a Parquet upload is sent as. */
export const PARQUET_PART = 'data';

/** `instant` moved back by `steps` of the frequency, as an ISO timestamp; calendar units from the start of their period. */
function stepsBefore(instant: number, steps: number, [count, unit]: [number, string]): string {
  const fixed: Record<string, number> = { s: 1_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
  if (unit in fixed) return iso(instant - steps * count * fixed[unit]);
  const months = { mo: 1, q: 3, y: 12 }[unit] ?? 1;
  const at = new Date(instant);
  // The beta's grid puts a month, quarter or year at its first day: step back from there, never from a 31st.
  const startMonth = at.getUTCMonth() - (at.getUTCMonth() % months);
  return iso(Date.UTC(at.getUTCFullYear(), startMonth - steps * count * months, 1));
}

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * The beta query for an uploaded Parquet file in the long format (`unique_id`, `ds`, `y`):
 * each series forecast from its end or, for a backtest, from `windows` cutoffs one horizon apart,
 * the last one horizon before `dataEnd` (the file's last time), so every forecast is scored as a
 * CSV backtest's are. Where the browser could not read the file's times, the cutoffs count back
 * from the data's end, which the service finds: one more, the last a forecast past the data.
 */
export function betaQuery(s: Settings, backtest: boolean, dataEnd?: number) {
  const step = STEP[s.freq] ?? [1, 'd'];
  const [count, unit] = step;
  const horizon = `${count * s.horizon}${unit}`;
  const cutoff =
    dataEnd === undefined ? { every: horizon, last: s.windows + 1 } : { every: horizon, end: stepsBefore(dataEnd, s.horizon, step), last: s.windows };
  return {
    input: {
      source: { uri: `inline://${PARQUET_PART}` },
      columns: { unique_id: 'identifier', ds: { kind: 'time', frequency: `${count}${unit}` }, y: { kind: 'target', aggregate: 'sum' } },
    },
    prediction_length: horizon,
    quantiles: s.quantiles,
    ...(backtest && { cutoff: [cutoff] }),
  };
}
