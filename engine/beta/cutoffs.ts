import { refuseField } from '../errors.ts';
import { parseTimestamp } from '../time-index.ts';
import { addDuration, duration, floorToGrid, isoTimestamp, type Duration } from './duration.ts';
import type { CutoffEntry } from './query-fields.ts';

/**
 * Forecast origins. A cutoff is the last step a forecast sees; the steps after it that are in the
 * data are its actuals (a backtest). Without `cutoff`, each series is forecast from its own last
 * step. `{"every": D}` counts back from `end` (default: the data's last step) in steps of D, each
 * origin snapped down onto the grid, down to `start` (default: the first step plus
 * prediction_length, so the earliest origin has some history), at most `last` of them (an extension:
 * the last K cutoffs of whatever data a run finds). Explicit dates must lie on the grid.
 */

export const MAX_CUTOFFS = 10_000;

const toMs = (text: string) => parseTimestamp(text)!.time.toMillis();

export interface DataSpan {
  first: number;
  last: number;
}

/** The cutoffs of the query, ascending; null means "each series' own end". */
export function resolveCutoffs(entries: CutoffEntry[] | undefined, freq: Duration, horizonSteps: number, span: DataSpan): number[] | null {
  if (!entries) return null;
  const out = new Set<number>();
  entries.forEach((entry, i) => {
    if (typeof entry === 'string') {
      out.add(toMs(entry));
      return;
    }
    const every = duration(entry.every);
    const end = floorToGrid(entry.end ? toMs(entry.end) : span.last, freq);
    const start = entry.start ? toMs(entry.start) : addDuration(span.first, freq, horizonSteps);
    const count = entry.last ?? Infinity;
    for (let k = 0; k < count; k++) {
      const cutoff = floorToGrid(addDuration(end, every, -k), freq);
      if (cutoff < start) break;
      if (k >= MAX_CUTOFFS) {
        const message = `every ${entry.every} from ${isoTimestamp(start)} to ${isoTimestamp(end)} makes more than ${MAX_CUTOFFS} cutoffs; use a longer step or a later start`;
        throw refuseField({ root: 'request', path: ['cutoff', i] }, message);
      }
      out.add(cutoff);
    }
  });
  if (out.size === 0) {
    const message = `the cutoffs fall outside the data (${isoTimestamp(span.first)} to ${isoTimestamp(span.last)})`;
    throw refuseField({ root: 'request', path: ['cutoff'] }, message);
  }
  return [...out].sort((a, b) => a - b);
}
