import { STEP, type Freq } from '../frequencies.ts';

/**
 * The stretch of time each index step stands for, on the wall clock of the index (epoch ms read as
 * UTC, engine/time-index.ts `wallClockMillis`); generated covariates are built per step from them.
 * Sub-daily steps: [t, t + step); `D`: the day of t; `W`: the 7 days ending on the day of t (as
 * pandas' `W` = `W-SUN` labels a week); `M`, `Q`, `Y`: the calendar period that contains t, whatever
 * day labels it (docs/decisions/041-generated-covariates.md).
 */
export const DAY_MS = 86_400_000;

export const dayOf = (t: number): number => Math.floor(t / DAY_MS) * DAY_MS;

export interface StepPeriods {
  readonly start: Float64Array;
  /** Exclusive end. */
  readonly end: Float64Array;
}

export function stepPeriods(times: Float64Array, freq: Freq): StepPeriods {
  const start = new Float64Array(times.length);
  const end = new Float64Array(times.length);
  const step = STEP[freq];
  times.forEach((t, i) => {
    if (step.kind === 'fixed') {
      start[i] = t;
      end[i] = t + step.ms;
    } else if (step.kind === 'days') {
      end[i] = dayOf(t) + DAY_MS;
      start[i] = end[i] - step.days * DAY_MS;
    } else {
      const d = new Date(t);
      const firstMonth = Math.floor(d.getUTCMonth() / step.months) * step.months;
      start[i] = Date.UTC(d.getUTCFullYear(), firstMonth, 1);
      end[i] = Date.UTC(d.getUTCFullYear(), firstMonth + step.months, 1);
    }
  });
  return { start, end };
}

/** First and last day (UTC midnights) any step's stretch touches. */
export function dayRange(periods: StepPeriods): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < periods.start.length; i++) {
    lo = Math.min(lo, dayOf(periods.start[i]));
    hi = Math.max(hi, dayOf(periods.end[i] - 1));
  }
  return [lo, hi];
}

/**
 * A per-day signal placed on the steps: a sub-daily step takes its day's value, a daily step its
 * day's, a longer step the sum over its days (a count of holiday days in a week or month). A day
 * whose value is NaN (unknown) makes the steps that contain it NaN.
 */
export function daysToSteps(periods: StepPeriods, freq: Freq, firstDay: number, daily: Float64Array): Float64Array {
  const out = new Float64Array(periods.start.length);
  const sub = STEP[freq].kind === 'fixed';
  for (let i = 0; i < out.length; i++) {
    const from = (dayOf(periods.start[i]) - firstDay) / DAY_MS;
    if (sub) {
      out[i] = daily[from];
      continue;
    }
    const to = (dayOf(periods.end[i] - 1) - firstDay) / DAY_MS;
    let sum = 0;
    for (let d = from; d <= to; d++) sum += daily[d];
    out[i] = sum;
  }
  return out;
}
