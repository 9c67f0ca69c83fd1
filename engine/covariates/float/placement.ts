import type { FloatSeries } from './float-sources.ts';
import type { StepPeriods } from '../periods.ts';

/**
 * A float data source's column placed on a series' steps: the mean of the source's rows whose time
 * falls in the step's stretch, else the latest row before it (carried past the source's end);
 * missing (NaN) before the source's first row, and null values are missing rows. A float source is
 * known in advance (plans, prices, weather forecasts), so its values run through the horizon like
 * `future_variables` (docs/decisions/041-generated-covariates.md).
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
