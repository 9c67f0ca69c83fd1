import type { CovariateValue } from '../../contract/model-interface.ts';

/**
 * The rows svc-global learns from and predicts with: one row per step t of one series, from what
 * is known before it, everything scaled by the series (`fillRow` lists the features). Steps a lag
 * reaches before the series' start are missing (NaN), which the trees handle.
 */

export interface SeriesData {
  /** Position of the series in the request. */
  readonly key: number;
  /** Known values, oldest first. */
  readonly values: Float64Array;
  /** Wall-clock epoch ms of the values then (for forecast tasks) the horizon. */
  readonly times: Float64Array;
  readonly hist: Readonly<Record<string, readonly CovariateValue[]>>;
  readonly future: Readonly<Record<string, readonly CovariateValue[]>>;
  readonly static: Readonly<Record<string, CovariateValue>>;
}

interface Variable {
  readonly name: string;
  readonly kind: 'hist' | 'future' | 'static';
  readonly categorical: boolean;
  /** Category -> code; filled from the training rows (codes ordered by mean target). */
  codes: Map<string, number>;
}

export interface Schema {
  readonly m: number;
  /** What rows are centred on: the level (mean of the last m values), or the mean of the values one to four seasons back. */
  readonly center: 'level' | 'seasonal';
  readonly horizon: number;
  readonly lags: readonly number[];
  readonly calendar: readonly ((d: Date) => number)[];
  readonly phase: (t: number) => number;
  readonly variables: readonly Variable[];
  readonly names: readonly string[];
  readonly width: number;
}

const DAY = 86_400_000;

function medianStep(series: readonly SeriesData[]): number {
  const diffs: number[] = [];
  for (const s of series) {
    for (let i = 1; i < s.times.length && diffs.length < 5000; i++) diffs.push(s.times[i] - s.times[i - 1]);
  }
  if (diffs.length === 0) return DAY;
  diffs.sort((a, b) => a - b);
  return diffs[diffs.length >> 1];
}

const isoWeek = (d: Date): number => {
  const day = (d.getUTCDay() + 6) % 7;
  const thursday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day + 3);
  return 1 + Math.floor((thursday - Date.UTC(new Date(thursday).getUTCFullYear(), 0, 1)) / (7 * DAY));
};

/** The feature layout for a request: lags from the season and step, variables from every series. */
export function buildSchema(series: readonly SeriesData[], m: number, horizon: number, center: Schema['center'] = 'level'): Schema {
  const step = medianStep(series);
  const p = Math.min(24, Math.max(m, 5));
  const lagSet = new Set<number>();
  for (let k = 1; k <= p; k++) lagSet.add(k);
  if (m > 1) for (const k of [m, 2 * m, 3 * m]) lagSet.add(k);
  if (step < DAY && Math.abs(m * step - DAY) < 1000) for (const k of [7 * m, 14 * m]) lagSet.add(k);
  if (Math.abs(step - DAY) < 1000) lagSet.add(364);
  const lags = [...lagSet].sort((a, b) => a - b);

  const calendar: [string, (d: Date) => number][] = [];
  if (step < DAY) calendar.push(['hour', (d) => d.getUTCHours() + d.getUTCMinutes() / 60]);
  if (step < 7 * DAY - 1000) calendar.push(['day_of_week', (d) => (d.getUTCDay() + 6) % 7]);
  if (step >= DAY - 1000 && step < 7 * DAY - 1000) calendar.push(['day_of_month', (d) => d.getUTCDate()]);
  if (step >= 7 * DAY - 1000 && step < 28 * DAY) calendar.push(['week_of_year', isoWeek]);
  if (step >= DAY - 1000 && step < 300 * DAY) calendar.push(['month', (d) => d.getUTCMonth() + 1]);
  // The step's position in the season, on the absolute calendar so every series agrees.
  const monthly = step >= 28 * DAY;
  const monthsPerStep = Math.max(1, Math.round(step / (30.44 * DAY)));
  const phase = (t: number) => {
    if (m <= 1) return 0;
    const d = new Date(t);
    const k = monthly ? Math.floor((d.getUTCFullYear() * 12 + d.getUTCMonth()) / monthsPerStep) : Math.round(t / step);
    return ((k % m) + m) % m;
  };

  const variables: Variable[] = [];
  const seen = new Map<string, Variable>();
  const visit = (kind: Variable['kind'], name: string, values: Iterable<CovariateValue>) => {
    const key = `${kind}\u0000${name}`;
    let v = seen.get(key);
    if (!v) {
      v = { name, kind, categorical: false, codes: new Map() };
      seen.set(key, v);
      variables.push(v);
    }
    if (!v.categorical) for (const x of values) if (typeof x === 'string') (v as { categorical: boolean }).categorical = true;
  };
  for (const s of series) {
    for (const [name, values] of Object.entries(s.hist)) visit('hist', name, values);
    for (const [name, values] of Object.entries(s.future)) visit('future', name, values);
    for (const [name, value] of Object.entries(s.static)) visit('static', name, [value]);
  }
  const names = [
    ...lags.map((k) => `lag${k}`),
    'level',
    'spread',
    'previous_season_level',
    'log_scale',
    ...calendar.map(([n]) => n),
    'phase',
    ...variables.map((v) => `${v.kind}:${v.name}`),
  ];
  return { m, center, horizon, lags, calendar: calendar.map(([, f]) => f), phase, variables, names, width: names.length };
}

/** The series' scale: mean absolute seasonal difference (lag 1 when too short); never 0. */
export function seriesScale(y: ArrayLike<number>, n: number, m: number): number {
  const lag = n > m && m > 1 ? m : 1;
  let sum = 0;
  let count = 0;
  for (let t = lag; t < n; t++) {
    sum += Math.abs(y[t] - y[t - lag]);
    count++;
  }
  let scale = count > 0 ? sum / count : 0;
  if (!(scale > 0)) {
    let abs = 0;
    for (let t = 0; t < n; t++) abs += Math.abs(y[t]);
    scale = n > 0 ? abs / n : 0;
  }
  return scale > 0 && Number.isFinite(scale) ? scale : 1;
}

/** The level before step t: mean of y[t-m .. t-1] (fewer at the start). */
export function levelAt(y: ArrayLike<number>, t: number, m: number): number {
  const from = Math.max(0, t - m);
  let sum = 0;
  for (let i = from; i < t; i++) sum += y[i];
  return sum / (t - from);
}

const covariateAt = (v: Variable, value: CovariateValue | undefined): number => {
  if (value === undefined || value === null) return NaN;
  if (v.categorical) return v.codes.get(String(value)) ?? NaN;
  return typeof value === 'number' ? value : NaN;
};

/** The value rows are centred on: the level, or the mean of the values 1..4 seasons before t. */
export function centerAt(schema: Schema, y: ArrayLike<number>, t: number): number {
  const m = schema.m;
  if (schema.center === 'seasonal' && m > 1 && t >= m) {
    let sum = 0;
    let k = 1;
    for (; k <= 4 && t - k * m >= 0; k++) sum += y[t - k * m];
    return sum / (k - 1);
  }
  return levelAt(y, t, m);
}

/**
 * Seasonal centring when the series repeat their season better than they repeat their last
 * value: mean in-sample error of the seasonal naive against the naive, each series scaled.
 */
export function chooseCenter(series: readonly Float64Array[], m: number): Schema['center'] {
  if (m <= 1) return 'level';
  let seasonal = 0;
  let naive = 0;
  for (const y of series) {
    if (y.length <= m + 1) continue;
    let es = 0;
    let en = 0;
    for (let t = m; t < y.length; t++) {
      es += Math.abs(y[t] - y[t - m]);
      en += Math.abs(y[t] - y[t - 1]);
    }
    const scale = es + en || 1;
    seasonal += es / scale;
    naive += en / scale;
  }
  return seasonal < naive ? 'seasonal' : 'level';
}

/**
 * Writes the features of step t of a series into `out` at `offset`. `y` holds the series'
 * values through t - 1 at least (known values, then the forecasts so far). Returns the centre C:
 * the mean of the values one to four seasons before t when the request's series repeat their
 * season better than their last value, else the level, the mean of the last `m` values. S is the
 * series' scale (its in-sample seasonal naive error).
 *
 *   target        (y[t] - C) / S, so trees learn corrections to a seasonal or level forecast
 *   lags          (y[t-k] - C) / S for the short lags 1..p and the seasonal lags m, 2m, 3m (and a
 *                 week of sub-daily steps, a year of days)
 *   shape         the level vs C, the spread of the last m values / S, the level change over a
 *                 season, log S
 *   calendar      hour, weekday, day of month, month, week of year, as the step size calls for,
 *                 and the step's phase in the season
 *   covariates    future variables at t, historical variables at t - h (known at every step
 *                 of a horizon h), static variables; strings (categories) as codes ordered by
 *                 their mean target
 */
export function fillRow(schema: Schema, out: Float64Array, offset: number, s: SeriesData, y: ArrayLike<number>, t: number, scale: number): number {
  const m = schema.m;
  const level = centerAt(schema, y, t);
  let c = offset;
  for (const k of schema.lags) out[c++] = t - k >= 0 ? (y[t - k] - level) / scale : NaN;
  out[c++] = schema.center === 'level' ? 0 : (levelAt(y, t, m) - level) / scale;
  // Spread of the last season, and the level of the season before it.
  const from = Math.max(0, t - m);
  let ss = 0;
  for (let i = from; i < t; i++) ss += (y[i] - level) * (y[i] - level);
  out[c++] = Math.sqrt(ss / (t - from)) / scale;
  out[c++] = t - 2 * m >= 0 && m > 1 ? (levelAt(y, t - m, m) - levelAt(y, t, m)) / scale : NaN;
  out[c++] = Math.log10(scale);
  const time = s.times[t];
  const date = new Date(time);
  for (const f of schema.calendar) out[c++] = Number.isFinite(time) ? f(date) : NaN;
  out[c++] = Number.isFinite(time) ? schema.phase(time) : NaN;
  for (const v of schema.variables) {
    if (v.kind === 'future') out[c++] = covariateAt(v, s.future[v.name]?.[t]);
    else if (v.kind === 'hist') out[c++] = t - schema.horizon >= 0 ? covariateAt(v, s.hist[v.name]?.[t - schema.horizon]) : NaN;
    else out[c++] = covariateAt(v, s.static[v.name]);
  }
  return level;
}

/**
 * Assigns category codes ordered by the mean target of the rows where each category appears
 * (the order a tree can split on best), from the training rows' raw categories.
 */
export function fitCategoryCodes(schema: Schema, rows: readonly { s: SeriesData; t: number }[], targets: Float64Array): void {
  schema.variables.forEach((v) => {
    if (!v.categorical) return;
    const sums = new Map<string, [number, number]>();
    rows.forEach(({ s, t }, r) => {
      const raw =
        v.kind === 'future'
          ? s.future[v.name]?.[t]
          : v.kind === 'hist'
            ? t - schema.horizon >= 0
              ? s.hist[v.name]?.[t - schema.horizon]
              : undefined
            : s.static[v.name];
      if (raw === undefined || raw === null) return;
      const key = String(raw);
      const acc = sums.get(key) ?? [0, 0];
      acc[0] += targets[r];
      acc[1] += 1;
      sums.set(key, acc);
    });
    const order = [...sums.entries()].sort((a, b) => a[1][0] / a[1][1] - b[1][0] / b[1][1] || (a[0] < b[0] ? -1 : 1));
    v.codes = new Map(order.map(([key], i) => [key, i]));
  });
}
