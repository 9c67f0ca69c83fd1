import { useMemo, useState } from 'preact/hooks';
import type { FanForecast, Points } from '../chart/model.ts';
import { showInstant } from '../time.ts';
import { FanChart } from './FanChart.tsx';
import { MetricsOfForecasts } from './MetricsOfForecasts.tsx';

/**
 * A series' forecasts as a fan chart: one creation date at a time (a selector) or all of them
 * overlaid, with the metrics of what is shown underneath.
 */
export function FanPanel({ observed, forecasts, initial = 0 }: { observed: Points | null; forecasts: FanForecast[]; initial?: number }) {
  const [chosen, setChosen] = useState(Math.min(initial, Math.max(0, forecasts.length - 1)));
  const [overlay, setOverlay] = useState(false);
  const shown = useMemo(() => (overlay ? forecasts : forecasts.slice(chosen, chosen + 1)), [forecasts, chosen, overlay]);
  const view = useMemo(() => ({ observed, forecasts: shown }), [observed, shown]);
  if (forecasts.length === 0) return <p class="muted">No forecasts for this series (yet).</p>;
  return (
    <div class="fan-panel">
      {forecasts.length > 1 && (
        <div class="controls">
          <label>
            Creation date{' '}
            <select name="fcd" value={chosen} disabled={overlay} onChange={(e) => setChosen(Number((e.target as HTMLSelectElement).value))}>
              {forecasts.map((f, i) => (
                <option value={i}>{showInstant(f.createdAt)}</option>
              ))}
            </select>
          </label>
          <label>
            <input type="checkbox" name="overlay" checked={overlay} onChange={(e) => setOverlay((e.target as HTMLInputElement).checked)} /> Overlay all{' '}
            {forecasts.length}
          </label>
        </div>
      )}
      <FanChart view={view} />
      <MetricsOfForecasts forecasts={shown} />
    </div>
  );
}
