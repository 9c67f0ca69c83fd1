/**
 * The feature table of TabICL's forecasting pipeline (tabicl 2.2.0, `tabicl.forecast`), for one
 * series: what `TabICLForecaster.predict` builds before the regressor sees it (TabPFN-TS shares it
 * with its own options). Missing targets as `_impute_missing_targets`; the kept history rows are the
 * training rows, one row per horizon step the test rows; columns in the pipeline's order: covariates,
 * then the index, datetime and FFT-detected periodic features. docs/foundation-models.md, "`tabicl`".
 */
import { ModelInputError, type ForecastTask } from '../../contract/model-interface.ts';

/** `PeriodicDetectionConfig` fields the manifest records (the other fields at their tabicl 2.2.0 defaults). */
export interface PeriodicConfig {
  readonly max_top_k: number;
  readonly detrend_type: 'linear';
  readonly zero_padding_factor: number;
  readonly magnitude_threshold: number;
}

export interface FeatureTable {
  /** Training targets (kept history values), oldest first. */
  readonly targets: Float64Array;
  /** Row-major features [rows][columns]: the training rows then the horizon rows; NaN where unknown (and in text columns). */
  readonly features: Float64Array;
  readonly rows: number;
  readonly columns: number;
  /** Text covariate columns (TabPFN-TS only): column -> value per row, null where missing. */
  readonly text: ReadonlyMap<number, readonly (string | null)[]>;
}

/**
 * What differs between the pipelines that build this table: TabICL's `tabicl.forecast` (the
 * default) and TabPFN-TS's `tabpfn_time_series` (whose calendar sin/cos divide by period - 1 and
 * use 365-day years and 52-week years, and whose context frame keeps every covariate column).
 */
export interface TableOptions {
  /** The model, for error messages. */
  readonly model: string;
  /** Periods of the calendar's sin/cos, in CALENDAR's order. */
  readonly calendarPeriods: readonly number[];
  /** Past-only, static and text covariates as columns too (TabPFN-TS), rather than refused (TabICL). */
  readonly allCovariates: boolean;
}

export const TABICL_TABLE: TableOptions = { model: 'tabicl', calendarPeriods: [60, 60, 24, 7, 30.5, 366, 53, 12], allCovariates: false };

const DAY_MS = 86_400_000;

/** The calendar's seasonal features: the 0-based value of a UTC wall-clock time (periods in TableOptions). */
const CALENDAR: readonly ((d: Date) => number)[] = [
  (d) => d.getUTCSeconds(),
  (d) => d.getUTCMinutes(),
  (d) => d.getUTCHours(),
  (d) => (d.getUTCDay() + 6) % 7, // pandas: Monday = 0
  (d) => d.getUTCDate() - 1,
  (d) => dayOfYear(d) - 1,
  (d) => isoWeek(d) - 1,
  (d) => d.getUTCMonth(),
];

function dayOfYear(d: Date): number {
  return Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / DAY_MS) + 1;
}

/** ISO 8601 week number (pandas `isocalendar().week`): the week of the Thursday of the date's week. */
function isoWeek(d: Date): number {
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const thursday = new Date(day + (3 - ((d.getUTCDay() + 6) % 7)) * DAY_MS);
  return Math.floor((thursday.getTime() - Date.UTC(thursday.getUTCFullYear(), 0, 1)) / DAY_MS / 7) + 1;
}

/** Numbers of `max_top_k` pairs plus the calendar's 17 and the running index. */
export const temporalColumns = (periodic: PeriodicConfig): number => 1 + 1 + 2 * CALENDAR.length + 2 * periodic.max_top_k;

/** numpy's round: halves to even. */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * scipy.signal.find_peaks's local maxima (`_local_maxima_1d`: a plateau gives its middle), at least
 * `height`. Values within `tie` count as equal: magnitudes equal in exact arithmetic (a Hann
 * window leaves a 3-value series a single sample, whose spectrum is flat) differ here in their
 * last bits, where the reference's FFT gives them equal.
 */
function peaks(x: Float64Array, height: number, tie: number): number[] {
  const out: number[] = [];
  let i = 1;
  const last = x.length - 1;
  while (i < last) {
    if (x[i] - x[i - 1] > tie) {
      let ahead = i + 1;
      while (ahead < last && Math.abs(x[ahead] - x[i]) <= tie) ahead++;
      if (x[i] - x[ahead] > tie) {
        const peak = Math.floor((i + ahead - 1) / 2);
        if (x[peak] >= height - tie) out.push(peak);
        i = ahead;
      }
    }
    i++;
  }
  return out;
}

/**
 * `detect_periodicities` with the encoder's configuration: linear detrend (`np.polyfit`), Hann
 * window, zero padding, |rfft| without its DC term, peaks above a share of the largest magnitude
 * (every bin when there is none), the `max_top_k` strongest, periods n / k rounded, duplicates
 * dropped (keeping the strongest), strongest first.
 */
export function detectPeriods(values: Float64Array, config: PeriodicConfig): number[] {
  const n = values.length;
  if (n === 0) return [];
  // Linear least squares on the positions 0..n-1 (np.polyfit degree 1), then the residuals.
  const meanT = (n - 1) / 2;
  let meanX = 0;
  for (let t = 0; t < n; t++) meanX += values[t];
  meanX /= n;
  let sxy = 0;
  let sxx = 0;
  for (let t = 0; t < n; t++) {
    sxy += (t - meanT) * (values[t] - meanX);
    sxx += (t - meanT) ** 2;
  }
  const slope = sxx > 0 ? sxy / sxx : 0;
  const signal = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    const window = n === 1 ? 1 : 0.5 - 0.5 * Math.cos((2 * Math.PI * t) / (n - 1)); // np.hanning
    signal[t] = (values[t] - (meanX + slope * (t - meanT))) * window;
  }
  // The real DFT of the zero-padded signal, bins 0..padded/2, through a table of the padded circle.
  const padded = n * config.zero_padding_factor;
  const cos = new Float64Array(padded);
  const sin = new Float64Array(padded);
  for (let j = 0; j < padded; j++) {
    cos[j] = Math.cos((2 * Math.PI * j) / padded);
    sin[j] = Math.sin((2 * Math.PI * j) / padded);
  }
  const bins = Math.floor(padded / 2) + 1;
  const magnitude = new Float64Array(bins);
  for (let k = 1; k < bins; k++) {
    let re = 0;
    let im = 0;
    for (let t = 0, at = 0; t < n; t++, at = (at + k) % padded) {
      re += signal[t] * cos[at];
      im -= signal[t] * sin[at];
    }
    magnitude[k] = Math.hypot(re, im);
  }
  let largest = 0;
  for (const m of magnitude) largest = Math.max(largest, m);
  const tie = 1e-9 * largest;
  const compare = (a: number, b: number): number => (Math.abs(a - b) <= tie ? 0 : a - b);
  let candidates = peaks(magnitude, config.magnitude_threshold * largest, tie);
  if (candidates.length === 0) candidates = Array.from({ length: bins }, (_, k) => k);
  // np.argsort ascending then reversed: the strongest first, ties the later bin first.
  const strongest = candidates
    .map((k, order) => ({ k, order }))
    .sort((a, b) => compare(magnitude[a.k], magnitude[b.k]) || a.order - b.order)
    .reverse()
    .slice(0, config.max_top_k)
    .map(({ k }) => k);
  const found = new Map<number, number>();
  for (const k of strongest) {
    const period = k === 0 ? 0 : roundHalfEven(padded / k); // frequency k / padded
    if (period !== 0 && !found.has(period)) found.set(period, magnitude[k]); // exclude_zero; np.unique keeps the first
  }
  // np.unique sorts by period; the stable sort by magnitude then keeps that order among ties.
  return [...found.entries()]
    .sort((a, b) => a[0] - b[0])
    .sort((a, b) => compare(b[1], a[1]))
    .map(([period]) => period);
}

type Column = readonly (number | string | null)[];

/**
 * The covariate columns of a task, over history then horizon: TabICL takes numeric known-future
 * ones only; TabPFN-TS every column of its context frame (known-future, then past-only, NaN over
 * the horizon, then static, constant), text included.
 */
function covariateColumns(task: ForecastTask, options: TableOptions): [string, Column][] {
  const cov = task.covariates;
  if (!cov) return [];
  const model = options.model;
  if (!options.allCovariates) {
    if (Object.keys(cov.hist).length > 0) throw new ModelInputError(`${model} takes known-future covariates only, not past-only ones`);
    if (Object.keys(cov.static).length > 0) throw new ModelInputError(`${model} takes known-future covariates only, not static variables`);
  }
  const steps = task.history.length + task.horizon;
  const columns: [string, Column][] = [
    ...Object.entries(cov.future).map(([name, values]): [string, Column] => [name, values]),
    ...Object.entries(cov.hist).map(([name, values]): [string, Column] => [name, Array.from({ length: steps }, (_, i) => values[i] ?? null)]),
    ...Object.entries(cov.static).map(([name, value]): [string, Column] => [name, Array.from({ length: steps }, () => value as number | string)]),
  ];
  if (!options.allCovariates) {
    for (const [name, values] of columns) {
      const text = values.find((v) => typeof v === 'string');
      if (text !== undefined) throw new ModelInputError(`${model} takes numeric covariates only; '${name}' has the string value '${text}'`);
    }
  }
  return columns;
}

/**
 * Where a task has no timestamps, the steps are hours from 2024-01-01 00:00 UTC, the convention of
 * the export's `reference_forecast` (tools/export/tabicl_forecast.py). The service's requests
 * always carry their index's times (engine/plan.ts gives them to every global model); only the
 * warm-up probe and the speed benchmark's series have none.
 */
export const UNTIMED_START = Date.UTC(2024, 0, 1);
const UNTIMED_STEP = 3_600_000;

/** The pipeline's table for one task: `contextLength` is the forecaster's max_context_length. */
export function featureTable(task: ForecastTask, contextLength: number, periodic: PeriodicConfig, options: TableOptions = TABICL_TABLE): FeatureTable {
  const { history, horizon } = task;
  const times = task.times ?? Float64Array.from({ length: history.length + horizon }, (_, i) => UNTIMED_START + i * UNTIMED_STEP);
  if (times.length !== history.length + horizon) {
    throw new ModelInputError(
      `${options.model} reads the timestamps of the history and the horizon: ${times.length} given for ${history.length} + ${horizon} steps`,
    );
  }
  let observed = 0;
  for (const v of history) if (!Number.isNaN(v)) observed++;
  // _impute_missing_targets: 0 for a series of at most one value, else the rows are dropped.
  let kept: number[] = [];
  history.forEach((v, i) => (observed <= 1 || !Number.isNaN(v)) && kept.push(i));
  kept = kept.slice(Math.max(0, kept.length - contextLength));
  const targets = Float64Array.from(kept, (i) => (Number.isNaN(history[i]) ? 0 : history[i]));
  const positions = [...kept, ...Array.from({ length: horizon }, (_, j) => history.length + j)];

  const covariates = covariateColumns(task, options);
  const periods = detectPeriods(targets, periodic);
  const rows = positions.length;
  const columns = covariates.length + temporalColumns(periodic);
  const features = new Float64Array(rows * columns);
  const text = new Map<number, (string | null)[]>();
  covariates.forEach(([, values], c) => values.some((v) => typeof v === 'string') && text.set(c, new Array<string | null>(rows).fill(null)));
  positions.forEach((at, row) => {
    const out = features.subarray(row * columns, (row + 1) * columns);
    let c = 0;
    for (const [, values] of covariates) {
      const v = values[at];
      if (typeof v === 'string') text.get(c)![row] = v;
      out[c++] = typeof v === 'number' ? v : NaN;
    }
    out[c++] = row; // running_index
    const date = new Date(times[at]);
    out[c++] = date.getUTCFullYear();
    for (let k = 0; k < CALENDAR.length; k++) {
      const angle = (2 * Math.PI * CALENDAR[k](date)) / options.calendarPeriods[k];
      out[c++] = Math.sin(angle);
      out[c++] = Math.cos(angle);
    }
    for (let p = 0; p < periodic.max_top_k; p++) {
      if (p < periods.length) {
        const angle = (2 * Math.PI * row) / periods[p];
        out[c++] = Math.sin(angle);
        out[c++] = Math.cos(angle);
      } else c += 2; // placeholder columns stay 0
    }
  });
  return { targets, features, rows, columns, text };
}
