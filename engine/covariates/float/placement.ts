import type { FloatSeries } from './float-sources.ts';
import type { StepPeriods } from '../periods.ts';

/**
 * A float data source's column placed on a series' steps: the mean of the source's rows whose
 * time falls in the step's stretch (a daily source on a weekly series gives weekly means), else
 * the latest row before the stretch (a daily source on an hourly series repeats the day's value
 * through the day, and the last row is carried past the source's end). Before the source's first
 * row a step is missing (NaN). Null values in the file are missing rows.
 *
 * A float source is taken as known in advance (plans, prices, weather forecasts): its values are
 * used through the forecast horizon like `future_variables`.
 */
export function floatCovariate(source: FloatSeries, periods: StepPeriods): Float64Array {
  const times: number[] = [];
  const values: number[] = [];
  source.times.forEach((t, i) => {
    if (Number.isFinite(source.values[i])) {
      times.push(t);
      values.push(source.values[i]);
    }
  });
  const out = new Float64Array(periods.start.length);
  // Steps are in time order, so one pointer walks the source.
  let j = 0;
  for (let i = 0; i < out.length; i++) {
    const start = periods.start[i];
    const end = periods.end[i];
    while (j < times.length && times[j] < start) j++;
    let sum = 0;
    let n = 0;
    for (let k = j; k < times.length && times[k] < end; k++, n++) sum += values[k];
    out[i] = n > 0 ? sum / n : j > 0 ? values[j - 1] : NaN;
  }
  return out;
}
