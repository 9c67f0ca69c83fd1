import { z } from 'zod';
import type { CovariateKind, GeneratedColumn } from './kind.ts';

/**
 * The `temporal_features` covariate, from each step's own timestamp (wall clock of the index):
 * raw calendar `components` (default `[year]`) and sin/cos pairs of `seasonal_features`, each
 * the feature's value v taken round its period p: sin(2 pi v / p), cos(2 pi v / p). Left null,
 * `seasonal_features` means all ten with their natural periods (below).
 */

const DAY_MS = 86_400_000;

function isoWeek(t: number): number {
  const d = new Date(t);
  const day = (d.getUTCDay() + 6) % 7; // Monday 0
  const thursday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day + 3);
  const yearStart = Date.UTC(new Date(thursday).getUTCFullYear(), 0, 1);
  return 1 + Math.floor((thursday - yearStart) / (7 * DAY_MS));
}

const dayOfYear = (d: Date) => Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / DAY_MS) + 1;
const dayOfWeek = (d: Date) => (d.getUTCDay() + 6) % 7; // Monday 0 .. Sunday 6, as pandas

/** Raw components: names a request may list, and their values. */
const COMPONENTS = {
  year: (d: Date) => d.getUTCFullYear(),
  quarter: (d: Date) => Math.floor(d.getUTCMonth() / 3) + 1,
  month: (d: Date) => d.getUTCMonth() + 1,
  week_of_year: (d: Date) => isoWeek(d.getTime()),
  day_of_month: (d: Date) => d.getUTCDate(),
  day_of_week: dayOfWeek,
  day_of_year: dayOfYear,
  hour: (d: Date) => d.getUTCHours(),
  minute: (d: Date) => d.getUTCMinutes(),
  second: (d: Date) => d.getUTCSeconds(),
  is_weekend: (d: Date) => (dayOfWeek(d) >= 5 ? 1 : 0),
} as const satisfies Record<string, (d: Date) => number>;

const COMPONENT_NAMES = Object.keys(COMPONENTS) as [keyof typeof COMPONENTS, ...(keyof typeof COMPONENTS)[]];

/** Seasonal features: the value that cycles, counted from 0, and its natural period. */
const SEASONAL: Record<string, { value: (d: Date) => number; period: number }> = {
  month_of_year: { value: (d) => d.getUTCMonth(), period: 12 },
  day_of_month: { value: (d) => d.getUTCDate() - 1, period: 31 },
  day_of_week: { value: dayOfWeek, period: 7 },
  day_of_year: { value: (d) => dayOfYear(d) - 1, period: 365.25 },
  week_of_year: { value: (d) => isoWeek(d.getTime()) - 1, period: 52.1775 },
  hour_of_day: { value: (d) => d.getUTCHours(), period: 24 },
  hour_of_week: { value: (d) => dayOfWeek(d) * 24 + d.getUTCHours(), period: 168 },
  minute_of_hour: { value: (d) => d.getUTCMinutes(), period: 60 },
  minute_of_day: { value: (d) => d.getUTCHours() * 60 + d.getUTCMinutes(), period: 1440 },
  second_of_minute: { value: (d) => d.getUTCSeconds(), period: 60 },
};

const TemporalConfig = z.strictObject({
  components: z.array(z.enum(COMPONENT_NAMES)).nullable().default(null),
  seasonal_features: z
    .strictObject({
      month_of_year: z.number().positive(),
      day_of_month: z.number().positive(),
      day_of_week: z.number().positive(),
      day_of_year: z.number().positive(),
      week_of_year: z.number().positive(),
      hour_of_day: z.number().positive(),
      hour_of_week: z.number().positive(),
      minute_of_hour: z.number().positive(),
      minute_of_day: z.number().positive(),
      second_of_minute: z.number().positive(),
    })
    .partial()
    .nullable()
    .default(null),
});
type TemporalConfig = z.output<typeof TemporalConfig>;

export const temporalFeatures: CovariateKind<'temporal_features', typeof TemporalConfig> = {
  type: 'temporal_features',
  config: TemporalConfig,
  resolve(config) {
    // One build per column keeps columns uniform; the features are cheap.
    const names = temporalColumns(config, new Float64Array(0)).map(([name]) => name);
    return { columns: names.map((name, c): GeneratedColumn => ({ name, kind: 'future', build: (_periods, times) => temporalColumns(config, times)[c][1] })) };
  },
};

/** Named columns of one temporal_features covariate over the given wall-clock times. */
function temporalColumns(config: TemporalConfig, times: Float64Array): [string, Float64Array][] {
  const components = config.components ?? ['year'];
  const seasonal = config.seasonal_features ?? Object.fromEntries(Object.entries(SEASONAL).map(([k, v]) => [k, v.period]));
  const dates = Array.from(times, (t) => new Date(t));
  const out: [string, Float64Array][] = [];
  for (const name of components) {
    const f = COMPONENTS[name as keyof typeof COMPONENTS];
    out.push([`temporal:${name}`, Float64Array.from(dates, f)]);
  }
  for (const [name, period] of Object.entries(seasonal)) {
    if (period === undefined) continue;
    const v = SEASONAL[name].value;
    out.push([`temporal:${name}_sin`, Float64Array.from(dates, (d) => Math.sin((2 * Math.PI * v(d)) / period))]);
    out.push([`temporal:${name}_cos`, Float64Array.from(dates, (d) => Math.cos((2 * Math.PI * v(d)) / period))]);
  }
  return out;
}
