import type { FanForecast, Points } from './chart/model.ts';
import { showInstant, toMillis } from './time.ts';
import type { BetaResponse, Prediction, SeriesView } from './types.ts';

/** A named series with its forecasts, ready for a FanPanel. */
export interface ChartedSeries {
  name: string;
  observed: Points | null;
  forecasts: FanForecast[];
}

const quantilesOf = (prediction: Record<string, number[]>) => Object.fromEntries(Object.entries(prediction).filter(([key]) => key !== 'mean'));

/** A forecast of the stable API (a job's or a synchronous one), made after the history's entry `createdAt`. */
export function fromPrediction(p: Prediction, createdAt: string): FanForecast {
  const created = toMillis(createdAt);
  return {
    label: showInstant(created),
    createdAt: created,
    x: p.index.map(toMillis),
    mean: p.prediction.mean,
    quantiles: quantilesOf(p.prediction),
    metrics: p.metrics,
  };
}

/** GET /forecast-jobs/{id}/series/{i}: the request's series as observed values, and its forecasts. */
export function fromJobSeries(view: SeriesView): { observed: Points; forecasts: FanForecast[] } {
  return {
    observed: { x: view.history.index.map(toMillis), y: view.history.target },
    forecasts: view.forecasts.map((f) => fromPrediction({ prediction: { mean: f.mean, ...f.quantiles }, index: f.index, metrics: f.metrics }, f.created_at)),
  };
}

/**
 * POST /v1-beta/forecast's rows grouped into series (one per combination of identifiers) and
 * forecasts (one per cutoff); the observed values are the actuals the rows carry.
 */
export function fromBetaResponse(response: BetaResponse): ChartedSeries[] {
  const { time, cutoff, identifiers, targets } = response.data;
  const names = Object.keys(identifiers);
  const out = new Map<string, ChartedSeries & { byCutoff: Map<string, FanForecast>; seen: Map<number, number | null> }>();
  for (const [target, values] of Object.entries(targets)) {
    const levels = Object.keys(values.quantiles).filter((k) => k !== 'mean');
    time.forEach((t, row) => {
      const who = names.map((n) => identifiers[n][row] ?? '(all)').join(' / ') || 'series';
      const name = Object.keys(targets).length > 1 ? `${who} · ${target}` : who;
      let series = out.get(name);
      if (!series) {
        series = { name, observed: { x: [], y: [] }, forecasts: [], byCutoff: new Map(), seen: new Map() };
        out.set(name, series);
      }
      let forecast = series.byCutoff.get(cutoff[row]);
      if (!forecast) {
        const created = toMillis(cutoff[row]);
        forecast = { label: showInstant(created), createdAt: created, x: [], mean: [], quantiles: Object.fromEntries(levels.map((l) => [l, []])) };
        series.byCutoff.set(cutoff[row], forecast);
        series.forecasts.push(forecast);
      }
      const x = toMillis(t);
      forecast.x.push(x);
      forecast.mean.push(values.quantiles.mean[row]);
      for (const level of levels) forecast.quantiles[level].push(values.quantiles[level][row]);
      if (values.actual[row] !== null) series.seen.set(x, values.actual[row]);
    });
  }
  return [...out.values()].map(({ name, forecasts, seen }) => {
    const x = [...seen.keys()].sort((a, b) => a - b);
    return { name, observed: x.length > 0 ? { x, y: x.map((t) => seen.get(t)!) } : null, forecasts };
  });
}
