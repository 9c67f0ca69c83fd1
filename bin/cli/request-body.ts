import { instantMillis } from '../../engine/time-index.ts';
import { countAtMost } from '../../models/numerics/sorted-search.ts';
import { UsageError, type PathDescriber } from './errors.ts';
import type { LongFormatData, LongSeries } from './long-format.ts';

/**
 * The job request (reference 2.1) built from a long-format file: one series per unique_id, in
 * unique_id order, with the job's settings. Forecast creation dates may be given as the API has
 * them (a history length, the same for every series) or as timestamps, which each series turns
 * into its own history length.
 */

/** `--fcds` entries: a number of observations, or the last timestamp a forecast sees. */
export type CreationDate = { history: number } | { at: string; ms: number };

export interface JobSettings {
  horizon: number;
  freq: string;
  /** null: one forecast from the end of each series. */
  fcds: CreationDate[] | null;
  quantiles: number[] | null;
  context: number | null;
}

/** `12,16,20` or `2024-03-01,2024-04-01` (or both). */
export function parseCreationDates(text: string): CreationDate[] {
  const entries = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new UsageError('--fcds needs at least one history length or timestamp');
  return entries.map((entry) => {
    if (/^\d+$/.test(entry)) {
      const history = Number(entry);
      if (history < 1) throw new UsageError(`--fcds: ${entry} is not a history length; a forecast needs at least one observation`);
      return { history };
    }
    const ms = instantMillis(entry);
    if (Number.isNaN(ms)) throw new UsageError(`--fcds: '${entry}' is neither a history length (a whole number) nor a date or ISO 8601 date-time`);
    return { at: entry, ms };
  });
}

/** A series' fcds: history lengths as given (the service checks them against the series), timestamps resolved. */
function seriesCreationDates(series: LongSeries, fcds: CreationDate[]): number[] {
  const lengths = new Set<number>();
  for (const fcd of fcds) {
    const history = 'history' in fcd ? fcd.history : countAtMost(series.times, fcd.ms);
    if (history >= 1) lengths.add(history);
  }
  if (lengths.size === 0) {
    throw new UsageError(`series '${series.id}' starts at ${series.index[0]}, after every --fcds timestamp: no forecast of it could see any history`, [
      'give earlier timestamps, or leave the series out of the file',
    ]);
  }
  return [...lengths].sort((a, b) => a - b);
}

export interface JobRequest {
  /** The JSON body, as sent. */
  json: string;
  /** Forecasts the job makes: series x creation dates. */
  forecasts: number;
  /** Each series' creation dates as sent (null: from the end). */
  fcds: (number[] | null)[];
}

export function buildJobRequest(data: LongFormatData, settings: JobSettings): JobRequest {
  const fcds = data.series.map((s) => (settings.fcds ? seriesCreationDates(s, settings.fcds) : null));
  const body = {
    series: data.series.map((s, i) => ({ target: s.target, index: s.index, ...(fcds[i] ? { fcds: fcds[i] } : {}) })),
    horizon: settings.horizon,
    freq: settings.freq,
    ...(settings.quantiles ? { quantiles: settings.quantiles } : {}),
    ...(settings.context ? { context: settings.context } : {}),
  };
  return { json: JSON.stringify(body), forecasts: fcds.reduce((sum, f) => sum + (f?.length ?? 1), 0), fcds };
}

const SERIES_PATH = /^body\.series\[(\d+)\](?:\.(target|index)\[(\d+)\]|\.fcds\[(\d+)\])?/;

/** Explains `body.series[3].target[17]` as `series 'store_7', 2024-01-18 (data.csv row 17)`. */
export function describeRequestPath(data: LongFormatData, request: JobRequest): PathDescriber {
  return (path) => {
    const match = SERIES_PATH.exec(path);
    const series = match ? data.series[Number(match[1])] : undefined;
    if (!match || !series) return undefined;
    const [, , , value, fcd] = match;
    const place = value !== undefined ? Number(value) : undefined;
    if (place !== undefined && place < series.index.length) {
      return `series '${series.id}', ${series.index[place]} (${data.file} row ${series.rows[place]})`;
    }
    const fcds = request.fcds[Number(match[1])];
    if (fcd !== undefined && fcds) return `series '${series.id}' (${series.index.length} observations), forecast creation date ${fcds[Number(fcd)]}`;
    return `series '${series.id}'`;
  };
}
