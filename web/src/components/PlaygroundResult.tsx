import { useState } from 'preact/hooks';
import { saveBlob } from '../api.ts';
import type { ChartedSeries } from '../results.ts';
import { FanPanel } from './FanPanel.tsx';

/** The forecasts as long-format CSV: one row per series, creation date and step. */
export function resultCsv(series: ChartedSeries[]): string {
  const levels = [...new Set(series.flatMap((s) => s.forecasts.flatMap((f) => Object.keys(f.quantiles))))].sort((a, b) => Number(a) - Number(b));
  const quote = (text: string) => (/[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);
  const lines = [['unique_id', 'created_at', 'ds', 'mean', ...levels].join(',')];
  for (const s of series)
    for (const f of s.forecasts)
      f.x.forEach((x, h) => {
        const cells = [
          quote(s.name),
          new Date(f.createdAt).toISOString(),
          new Date(x).toISOString(),
          f.mean[h],
          ...levels.map((l) => f.quantiles[l]?.[h] ?? ''),
        ];
        lines.push(cells.join(','));
      });
  return `${lines.join('\n')}\n`;
}

/** The playground's answer: a fan chart per series (a selector when there are several) and downloads. */
export function PlaygroundResult({ series, raw }: { series: ChartedSeries[]; raw: unknown }) {
  const [chosen, setChosen] = useState(0);
  const shown = series[Math.min(chosen, series.length - 1)];
  return (
    <div class="result">
      <div class="controls">
        {series.length > 1 && (
          <label>
            Series{' '}
            <select name="result-series" value={chosen} onChange={(e) => setChosen(Number((e.target as HTMLSelectElement).value))}>
              {series.map((s, i) => (
                <option value={i}>{s.name}</option>
              ))}
            </select>
          </label>
        )}
        <button type="button" name="download-csv" onClick={() => saveBlob(new Blob([resultCsv(series)], { type: 'text/csv' }), 'forecast.csv')}>
          Download CSV
        </button>
        <button type="button" name="download-json" onClick={() => saveBlob(new Blob([JSON.stringify(raw)], { type: 'application/json' }), 'forecast.json')}>
          Download JSON
        </button>
      </div>
      <h3>{shown.name}</h3>
      <FanPanel key={chosen} observed={shown.observed} forecasts={shown.forecasts} />
    </div>
  );
}
