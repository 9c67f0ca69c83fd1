/**
 * Loader for `yearly-panels.csv.gz` (see datasets/README.md): real yearly series from economic and
 * demographic panels, written by tools/reference/yearly-panels.py. The same long format as
 * r-seasonal.csv.gz (`unique_id,freq,y`, freq 1), so it shares that file's reader.
 */
import { loadRSeasonal, type RSeasonalSeries } from './r-seasonal.ts';

export const YEARLY_PANELS_PATH = new URL('./yearly-panels.csv.gz', import.meta.url).pathname;

export function loadYearlyPanels(): RSeasonalSeries[] {
  return loadRSeasonal(YEARLY_PANELS_PATH);
}
