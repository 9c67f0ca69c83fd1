/**
 * TimesFM's in-context regression on known-future covariates: the reference's
 * `forecast_with_covariates` (timesfm 3.0, timesfm.utils.xreg_lib) with its defaults, xreg_mode
 * "xreg + timesfm", targets normalised per input, ridge 0. One linear model over the whole set of
 * series (text covariates one-hot as sklearn's OneHotEncoder(drop="first")); TimesFM forecasts each
 * residual, and the fit over the horizon is added back to the point and every quantile.
 */
import { symmetricEigen } from '../../numerics/linalg.ts';
import { creationTime, ModelInputError, type CovariateValue, type ForecastTask } from '../../contract/model-interface.ts';

/** The reference's tolerance below which a spread counts as zero (xreg_lib._TOL). */
const TOLERANCE = 1e-6;

/**
 * jnp.linalg.pinv's default cut-off for small eigenvalues, in the reference's float32 and on its
 * power-of-two padded matrix: 10 * size * eps relative to the largest eigenvalue.
 */
const FLOAT32_EPSILON = 2 ** -23;

export interface XRegSeries {
  readonly target: Float64Array;
  /** Each covariate over the target's steps then the horizon's: numbers, or categories as text. */
  readonly future: Readonly<Record<string, ArrayLike<CovariateValue>>>;
}

export interface XRegFit {
  /** Per series: the standardised target minus the linear fit, what TimesFM forecasts. */
  readonly residuals: Float64Array[];
  /** Per series: the linear fit over the horizon, on the standardised scale. */
  readonly horizonFit: Float64Array[];
  /** Per series: the mean and spread that undo the standardisation. */
  readonly scales: { mean: number; scale: number }[];
}

function meanAndScale(values: ArrayLike<number>, from = 0, to = values.length, stride = 1, offset = 0): { mean: number; scale: number } {
  const n = to - from;
  let sum = 0;
  for (let i = from; i < to; i++) sum += values[i * stride + offset];
  const mean = sum / n;
  let squares = 0;
  for (let i = from; i < to; i++) squares += (values[i * stride + offset] - mean) ** 2;
  const sd = Math.sqrt(squares / n); // np.std: the population spread
  return { mean, scale: sd > TOLERANCE ? sd : 1 };
}

/** (XᵀX)⁺ Xᵀ y for row-major X (rows x k), the pseudo-inverse taken by eigen-decomposition. */
function pseudoInverseSolve(X: Float64Array, y: Float64Array, rows: number, k: number): Float64Array {
  const gram = new Float64Array(k * k);
  const moment = new Float64Array(k);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < k; i++) {
      const xi = X[r * k + i];
      moment[i] += xi * y[r];
      for (let j = i; j < k; j++) gram[i * k + j] += xi * X[r * k + j];
    }
  }
  for (let i = 0; i < k; i++) for (let j = 0; j < i; j++) gram[i * k + j] = gram[j * k + i];
  const { values, vectors } = symmetricEigen(gram, k);
  const padded = 2 ** Math.ceil(Math.log2(k)); // XᵀX of the column-padded X is padded x padded
  const cutoff = 10 * padded * FLOAT32_EPSILON * Math.max(...values.map(Math.abs));
  const beta = new Float64Array(k);
  for (let e = 0; e < k; e++) {
    if (!(Math.abs(values[e]) > cutoff)) continue;
    let projection = 0;
    for (let i = 0; i < k; i++) projection += vectors[i * k + e] * moment[i];
    for (let i = 0; i < k; i++) beta[i] += (vectors[i * k + e] * projection) / values[e];
  }
  return beta;
}

/**
 * The design matrices, row-major with the intercept in column 0: numeric covariates (name order,
 * standardised), then each text covariate's one-hot columns (name order), as the reference's
 * create_covariate_matrix lays them out.
 */
function designMatrices(
  series: readonly XRegSeries[],
  horizon: number,
): { train: Float64Array; test: Float64Array; k: number; trainRows: number; testRows: number } {
  const names = Object.keys(series[0].future).sort();
  const values = (name: string, s: XRegSeries) => {
    const v = s.future[name];
    if (!v || v.length !== s.target.length + horizon)
      throw new ModelInputError(`covariate '${name}' needs ${s.target.length + horizon} values (history + horizon) in every series forecast together`);
    return v;
  };
  // A covariate with any text value is categorical; its numbers, if any, count as categories too.
  const categorical = names.filter((name) => series.some((s) => Array.from(values(name, s)).some((v) => typeof v === 'string')));
  const numeric = names.filter((name) => !categorical.includes(name));
  const categories = categorical.map((name) => {
    const seen = new Set<string>();
    for (const s of series) for (let t = 0; t < s.target.length; t++) seen.add(String(values(name, s)[t]));
    return [...seen].sort().slice(1); // the first category is the dropped baseline
  });
  const k = 1 + numeric.length + categories.reduce((n, c) => n + c.length, 0);
  const trainRows = series.reduce((n, s) => n + s.target.length, 0);
  const testRows = series.length * horizon;
  const train = new Float64Array(trainRows * k);
  const test = new Float64Array(testRows * k);
  const fill = (X: Float64Array, row: number, s: XRegSeries, t: number) => {
    X[row * k] = 1;
    numeric.forEach((name, c) => (X[row * k + 1 + c] = Number(values(name, s)[t])));
    let column = 1 + numeric.length;
    categorical.forEach((name, c) => {
      const at = categories[c].indexOf(String(values(name, s)[t]));
      if (at >= 0) X[row * k + column + at] = 1;
      column += categories[c].length;
    });
  };
  let trainAt = 0;
  let testAt = 0;
  for (const s of series) {
    const n = s.target.length;
    for (let t = 0; t < n; t++) fill(train, trainAt + t, s, t);
    for (let t = 0; t < horizon; t++) fill(test, testAt + t, s, n + t);
    trainAt += n;
    testAt += horizon;
  }
  // Numeric covariates standardised over every context row.
  for (let c = 1; c <= numeric.length; c++) {
    const { mean, scale } = meanAndScale(train, 0, trainRows, k, c);
    for (let r = 0; r < trainRows; r++) train[r * k + c] = (train[r * k + c] - mean) / scale;
    for (let r = 0; r < testRows; r++) test[r * k + c] = (test[r * k + c] - mean) / scale;
  }
  return { train, test, k, trainRows, testRows };
}

/** The linear fit of a set of series that share their covariate names and horizon. */
export function fitInContextRegression(series: readonly XRegSeries[], horizon: number): XRegFit {
  const { train, test, k, trainRows } = designMatrices(series, horizon);
  const scales = series.map((s) => meanAndScale(s.target));
  const y = new Float64Array(trainRows);
  let trainAt = 0;
  series.forEach((s, i) => {
    for (let t = 0; t < s.target.length; t++) y[trainAt + t] = (s.target[t] - scales[i].mean) / scales[i].scale;
    trainAt += s.target.length;
  });
  const beta = pseudoInverseSolve(train, y, trainRows, k);
  const fitted = (X: Float64Array, row: number) => {
    let v = 0;
    for (let c = 0; c < k; c++) v += X[row * k + c] * beta[c];
    return v;
  };

  const residuals: Float64Array[] = [];
  const horizonFit: Float64Array[] = [];
  trainAt = 0;
  let testAt = 0;
  for (const s of series) {
    const n = s.target.length;
    residuals.push(Float64Array.from({ length: n }, (_, t) => y[trainAt + t] - fitted(train, trainAt + t)));
    horizonFit.push(Float64Array.from({ length: horizon }, (_, t) => fitted(test, testAt + t)));
    trainAt += n;
    testAt += horizon;
  }
  return { residuals, horizonFit, scales };
}

/** A TimesFM forecast: the point and every output channel, [step] each. */
export interface ChannelForecast {
  point: Float64Array;
  channels: Float64Array[];
}

/**
 * The reference's forecast_with_covariates ("xreg + timesfm") around a model's forecast: one
 * linear fit over all the series, the model on each residual, the horizon's fit added back to
 * the point and every channel, then the target's own scale restored.
 */
export async function forecastWithRegression(
  series: readonly XRegSeries[],
  horizon: number,
  forecastResiduals: (residuals: Float64Array[]) => Promise<ChannelForecast[]>,
): Promise<ChannelForecast[]> {
  const fit = fitInContextRegression(series, horizon);
  const forecasts = await forecastResiduals(fit.residuals);
  return forecasts.map((f, i) => {
    const { mean, scale } = fit.scales[i];
    const restore = (values: Float64Array) => values.map((v, t) => (v + fit.horizonFit[i][t]) * scale + mean);
    return { point: restore(f.point), channels: f.channels.map(restore) };
  });
}

export type KnownFuture = Readonly<Record<string, readonly CovariateValue[]>>;

/** Tasks forecast together: one horizon, and with covariates one regression. */
export interface TaskSet {
  horizon: number;
  indices: number[];
  /** Each task's known-future covariates; null for a set forecast from the targets alone. */
  future: KnownFuture[] | null;
}

/**
 * The tasks of a batch grouped as TimesFM forecasts them: without covariates by horizon; with
 * known-future covariates by horizon, covariate names and creation time, each set one regression
 * (so a backtest's fit never uses values after its forecast's creation date). The API passes
 * numbers only (it refuses string covariates for TimesFM, as the API reference gives them to
 * tabpfn-ts and svc-global); text values would be one-hot encoded as the reference does.
 */
export function taskSets(model: string, tasks: readonly ForecastTask[]): TaskSet[] {
  const sets = new Map<string, TaskSet>();
  tasks.forEach((t, i) => {
    const cov = t.covariates;
    if (cov && (Object.keys(cov.hist).length > 0 || Object.keys(cov.static).length > 0)) {
      throw new ModelInputError(`${model} takes known-future covariates only (its in-context regression), not historical or static ones`);
    }
    const future = cov && Object.keys(cov.future).length > 0 ? cov.future : null;
    const key = future ? `${t.horizon}@${creationTime(t)}@${JSON.stringify(Object.keys(future).sort())}` : String(t.horizon);
    let set = sets.get(key);
    if (!set) sets.set(key, (set = { horizon: t.horizon, indices: [], future: future ? [] : null }));
    set.indices.push(i);
    if (future) set.future!.push(future);
  });
  return [...sets.values()];
}
