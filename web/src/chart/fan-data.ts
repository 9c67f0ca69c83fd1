import uPlot from 'uplot';
import { showInstant } from '../time.ts';
import { bandLabel, fanLevels, type FanView, type Points } from './model.ts';
import { ACTUAL_COLOR, bandAlpha, FORECAST_COLORS, HISTORY_COLOR, rgba } from './palette.ts';

type Column = (number | null)[];

/**
 * The observed series split at the earliest forecast's creation time: history up to it, actuals
 * after it as far as the forecasts reach (what they can be scored against).
 */
export function splitObserved(view: FanView): { history: Points; actual: Points } {
  const history: Points = { x: [], y: [] };
  const actual: Points = { x: [], y: [] };
  if (!view.observed) return { history, actual };
  const cut = view.forecasts.length > 0 ? Math.min(...view.forecasts.map((f) => f.createdAt)) : Infinity;
  const reach = Math.max(-Infinity, ...view.forecasts.flatMap((f) => f.x));
  view.observed.x.forEach((x, i) => {
    if (x <= cut) {
      history.x.push(x);
      history.y.push(view.observed!.y[i]);
    } else if (x <= reach) {
      actual.x.push(x);
      actual.y.push(view.observed!.y[i]);
    }
  });
  return { history, actual };
}

/**
 * uPlot's data and options for a fan chart: history, each forecast's mean with its quantile
 * bands (and unpaired quantiles as dashed lines), and the actuals where known, all on one time
 * axis (UTC). Several forecasts are overlaid, each in its own colour.
 */
export function fanChart(view: FanView, width: number, height: number): { data: uPlot.AlignedData; options: uPlot.Options } {
  const { history, actual } = splitObserved(view);
  const times = [...new Set([...history.x, ...actual.x, ...view.forecasts.flatMap((f) => f.x)])].sort((a, b) => a - b);
  const at = new Map(times.map((t, i) => [t, i]));
  const column = (x: number[], y: (number | null)[]): Column => {
    const out: Column = new Array(times.length).fill(null);
    x.forEach((t, i) => (out[at.get(t)!] = y[i]));
    return out;
  };

  const columns: Column[] = [];
  const series: uPlot.Series[] = [{ label: 'time' }];
  const bands: uPlot.Band[] = [];
  const add = (values: Column, options: uPlot.Series): number => {
    columns.push(values);
    series.push({ spanGaps: true, points: { show: false }, ...options });
    return series.length - 1;
  };

  if (history.x.length > 0) add(column(history.x, history.y), { label: 'history', stroke: HISTORY_COLOR, width: 1.5 });
  const overlaid = view.forecasts.length > 1;
  view.forecasts.forEach((forecast, f) => {
    const color = FORECAST_COLORS[f % FORECAST_COLORS.length];
    const suffix = overlaid ? ` ${showInstant(forecast.createdAt)}` : '';
    const { bands: pairs, lines } = fanLevels(Object.keys(forecast.quantiles));
    // A one-step forecast has no line to draw, nor a band to fill: its values are drawn as points.
    const dot = (size: number) => (forecast.x.length === 1 ? { points: { show: true, size, fill: color } } : {});
    pairs.forEach((pair, k) => {
      const edge = { stroke: rgba(color, 0.45), width: 1, ...dot(5) };
      const high = add(column(forecast.x, forecast.quantiles[pair[1]]), { ...edge, label: `${bandLabel(pair)} upper${suffix}` });
      const low = add(column(forecast.x, forecast.quantiles[pair[0]]), { ...edge, label: `${bandLabel(pair)} lower${suffix}` });
      bands.push({ series: [high, low], fill: rgba(color, bandAlpha(k)) });
    });
    for (const level of lines)
      add(column(forecast.x, forecast.quantiles[level]), { label: `q${level}${suffix}`, stroke: color, width: 1, dash: [3, 3], ...dot(4) });
    add(column(forecast.x, forecast.mean), { label: `mean${suffix}`, stroke: color, width: 2, ...dot(8) });
  });
  if (actual.x.length > 0)
    add(column(actual.x, actual.y), { label: 'actual', stroke: ACTUAL_COLOR, width: 1.5, dash: [5, 3], points: { show: true, size: 5, fill: ACTUAL_COLOR } });

  const options: uPlot.Options = {
    width,
    height,
    series,
    bands,
    scales: { x: { time: true } },
    // The service's instants are UTC; so are the chart's axis labels.
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1e3), 'Etc/UTC'),
    axes: [{}, { size: 64 }],
    legend: { live: true },
  };
  return { data: [times.map((t) => t / 1000), ...columns] as uPlot.AlignedData, options };
}
