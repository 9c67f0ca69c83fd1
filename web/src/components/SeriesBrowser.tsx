import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, getJson } from '../api.ts';
import { fromJobSeries } from '../results.ts';
import { seriesNames } from '../session.ts';
import type { SeriesView } from '../types.ts';
import { FanPanel } from './FanPanel.tsx';

/** A forecast job's series one at a time: history, forecasts by creation date, actuals. */
export function SeriesBrowser({ jobId, initialSeries, initialFcd }: { jobId: string; initialSeries: number; initialFcd: number }) {
  const [index, setIndex] = useState(initialSeries);
  const [view, setView] = useState<SeriesView | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    getJson<SeriesView>(`/forecast-jobs/${jobId}/series/${index}`).then(setView, (err) =>
      setError(err instanceof ApiError ? err.describe() : (err as Error).message),
    );
  }, [jobId, index]);
  const charted = useMemo(() => view && fromJobSeries(view), [view]);
  const names = seriesNames(jobId);
  const total = view?.total_series ?? 0;
  // Typed values are whole series numbers: 1.5 reads as 1, not as a path the API refuses.
  const go = (next: number) => setIndex(Math.min(Math.max(0, Math.trunc(next) || 0), Math.max(0, total - 1)));
  const initial = view
    ? Math.max(
        0,
        view.forecasts.findIndex((f) => f.fcd_index === initialFcd),
      )
    : 0;

  return (
    <div class="series-browser">
      <h3>Series</h3>
      <div class="controls">
        <button type="button" aria-label="Previous series" disabled={index === 0} onClick={() => go(index - 1)}>
          ‹
        </button>
        <label>
          Series{' '}
          <input
            name="series"
            type="number"
            min={0}
            max={Math.max(0, total - 1)}
            value={index}
            onChange={(e) => go(Number((e.target as HTMLInputElement).value))}
          />
        </label>
        <span class="muted">
          of {total}
          {names?.[index] ? ` · ${names[index]}` : ''}
        </span>
        <button type="button" aria-label="Next series" disabled={index >= total - 1} onClick={() => go(index + 1)}>
          ›
        </button>
      </div>
      {error && <p class="error">{error}</p>}
      {view?.only_as_context && <p class="muted">This series is context only: it is not forecast.</p>}
      {charted && view?.series_index === index && <FanPanel key={index} observed={charted.observed} forecasts={charted.forecasts} initial={initial} />}
    </div>
  );
}
