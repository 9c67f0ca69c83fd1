/**
 * Loader for `r-seasonal.csv.gz` (see datasets/README.md): short monthly and quarterly series, R's
 * bundled examples and seeded SARIMA simulations, written by tools/reference/r-seasonal-set.R.
 * Long format `unique_id,freq,y`, rows grouped by series, each oldest first.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export interface RSeasonalSeries {
  readonly id: string;
  /** Seasonal period: 12 monthly, 4 quarterly. */
  readonly freq: number;
  readonly y: Float64Array;
}

export const R_SEASONAL_PATH = new URL('./r-seasonal.csv.gz', import.meta.url).pathname;

export function loadRSeasonal(path = R_SEASONAL_PATH): RSeasonalSeries[] {
  const lines = gunzipSync(readFileSync(path)).toString('utf8').split('\n');
  if (lines[0].trim() !== 'unique_id,freq,y') throw new Error(`${path}: unexpected header "${lines[0]}"`);
  const out: { id: string; freq: number; y: number[] }[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const [id, freq, y] = line.split(',');
    const last = out[out.length - 1];
    if (!last || last.id !== id) out.push({ id, freq: Number(freq), y: [Number(y)] });
    else last.y.push(Number(y));
  }
  return out.map((s) => ({ id: s.id, freq: s.freq, y: Float64Array.from(s.y) }));
}
