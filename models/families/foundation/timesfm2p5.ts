/**
 * TimesFM 2.5 on ONNX Runtime: the pre- and post-processing of the reference's
 * `TimesFM_2p5.forecast` and its compiled decode (timesfm 3.0) around an exported forward of the
 * network (tools/export/timesfm2p5.py), with the flags of the manifest's forecast_config. The
 * roll-out re-runs the whole sequence where the reference keeps a key/value cache: the same result.
 * Output channels: 0 the mean head, 1..9 the levels 0.1..0.9; the point forecast is channel 5.
 * Contract: docs/foundation-models.md, the contracts table and "Chronos-2 and TimesFM".
 */
import type { ForecastOutput, ForecastTask, GlobalModel, ModelSettings } from '../../contract/model-interface.ts';
import { ModelInputError } from '../../contract/model-interface.ts';
import { mapQuantileSteps } from './quantiles.ts';
import { bool, float32, onnxModel, output, type Runner } from './onnx-session.ts';
import type { TimesFM25Manifest } from './model-store.ts';
import { forecastWithRegression, taskSets, type ChannelForecast, type XRegSeries } from './timesfm-xreg.ts';

/** The reference's tolerance below which a spread counts as zero (timesfm.torch.util). */
const TOLERANCE = 1e-6;

type Flags = TimesFM25Manifest['forecast_config'];

/** A series' forecast: the point and the 10 output channels, each [step]. */
export type TimesFMForecast = ChannelForecast;

/**
 * timesfm_2p5_base.strip_leading_nans then linear_interpolation (np.interp, flat at the ends).
 * A history without missing values is returned itself, not a copy: callers read the result only.
 */
export function fillMissing(history: Float64Array): Float64Array {
  // The common case, in one plain pass (a loop: `some` with a callback per value costs more on
  // long histories).
  let complete = true;
  for (let i = 0; i < history.length; i++) {
    if (Number.isNaN(history[i])) {
      complete = false;
      break;
    }
  }
  if (complete) return history;
  let first = history.findIndex((v) => !Number.isNaN(v));
  if (first < 0) first = 0; // all missing: argmax of an all-false mask is 0
  const value = history.slice(first);
  const known: number[] = [];
  value.forEach((v, i) => Number.isNaN(v) || known.push(i));
  if (known.length === value.length) return value;
  if (known.length === 0) return value.fill(0); // the reference's fallback: the mean of nothing, 0
  let k = 0;
  for (let i = 0; i < value.length; i++) {
    if (!Number.isNaN(value[i])) continue;
    while (k < known.length && known[k] < i) k++;
    const right = known[k];
    const left = known[k - 1];
    if (left === undefined) value[i] = value[right];
    else if (right === undefined) value[i] = value[left];
    else value[i] = value[left] + ((i - left) / (right - left)) * (value[right] - value[left]);
  }
  return value;
}

/** Running count, mean and spread (timesfm.torch.util.update_running_stats) of one row. */
interface Stats {
  n: number;
  mu: number;
  sigma: number;
}

function updateStats(s: Stats, x: ArrayLike<number>, masked: ArrayLike<boolean | number>, from: number, count: number): Stats {
  let incN = 0;
  let sum = 0;
  for (let i = from; i < from + count; i++) {
    if (!masked[i]) {
      incN++;
      sum += x[i];
    }
  }
  const incMu = incN === 0 ? 0 : sum / incN;
  let sq = 0;
  for (let i = from; i < from + count; i++) if (!masked[i]) sq += (x[i] - incMu) ** 2;
  const incSigma = Math.sqrt(incN === 0 ? 0 : sq / incN);
  const n = s.n + incN;
  const safe = n === 0 ? 1 : n;
  const mu = n === 0 ? 0 : (s.n * s.mu + incMu * incN) / safe;
  const variance = n === 0 ? 0 : (s.n * s.sigma ** 2 + incN * incSigma ** 2 + s.n * (s.mu - mu) ** 2 + incN * (incMu - mu) ** 2) / safe;
  return { n, mu, sigma: Math.sqrt(Math.max(variance, 0)) };
}

const normalise = (x: number, mu: number, sigma: number) => (x - mu) / (sigma < TOLERANCE ? 1 : sigma);
const denormalise = (x: number, mu: number, sigma: number) => x * sigma + mu;

/** One decode of the reference (`TimesFM_2p5_200M_torch_module.decode`) on prepared rows. */
interface Decoded {
  /** [row][step * q + channel], renormalised, over the prefill's output patch then the roll-out. */
  forecast: Float64Array[];
  /** [row][j * q + channel], renormalised, the last context patch's quantile spread. */
  spread: Float64Array[];
}

async function decode(run: Runner, m: TimesFM25Manifest, inputs: Float64Array[], masks: Uint8Array[], steps: number): Promise<Decoded> {
  const p = m.patch_size;
  const o = m.output_patch_len;
  const os = m.output_quantile_len;
  const q = m.quantile_levels.length + 1;
  const perStep = o / p; // patches fed back per roll-out step
  const rows = inputs.length;
  const width = inputs[0].length;
  const prefill = width / p;

  // Token inputs of the whole sequence, normalised per patch, as the network sees them.
  const tokens = Math.max(1, prefill + steps * perStep);
  const seqInputs = inputs.map(() => new Float32Array(tokens * p));
  const seqMasks = inputs.map(() => new Uint8Array(tokens * p));
  const stats: Stats[] = [];
  const lastMu = new Float64Array(rows);
  const lastSigma = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s: Stats = { n: 0, mu: 0, sigma: 0 };
    for (let i = 0; i < prefill; i++) {
      s = updateStats(s, inputs[r], masks[r], i * p, p);
      for (let j = i * p; j < (i + 1) * p; j++) {
        seqMasks[r][j] = masks[r][j];
        seqInputs[r][j] = masks[r][j] ? 0 : normalise(inputs[r][j], s.mu, s.sigma);
      }
    }
    stats.push(s);
    lastMu[r] = s.mu;
    lastSigma[r] = s.sigma;
  }

  const forward = async (length: number) => {
    const data = new Float32Array(rows * length * p);
    const mask = new Uint8Array(rows * length * p);
    for (let r = 0; r < rows; r++) {
      data.set(seqInputs[r].subarray(0, length * p), r * length * p);
      mask.set(seqMasks[r].subarray(0, length * p), r * length * p);
    }
    const out = await run({ inputs: float32(data, [rows, length, p]), masks: bool(mask, [rows, length, p]) });
    return { point: output(out, 'point_last', [rows, o * q]), spread: output(out, 'quantile_spread_last', [rows, os * q]) };
  };

  const forecast = inputs.map(() => new Float64Array((steps + 1) * o * q));
  const spread = inputs.map(() => new Float64Array(os * q));
  const first = await forward(prefill);
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < o * q; k++) forecast[r][k] = denormalise(first.point[r * o * q + k], lastMu[r], lastSigma[r]);
    for (let k = 0; k < os * q; k++) spread[r][k] = denormalise(first.spread[r * os * q + k], lastMu[r], lastSigma[r]);
  }

  const aridx = m.decode_index;
  for (let step = 0; step < steps; step++) {
    // The median of the last output patch becomes `perStep` new input patches.
    const from = prefill + step * perStep;
    for (let r = 0; r < rows; r++) {
      const fed = new Float64Array(o);
      for (let j = 0; j < o; j++) fed[j] = forecast[r][(step * o + j) * q + aridx];
      const none = new Uint8Array(o);
      let s = stats[r];
      for (let i = 0; i < perStep; i++) {
        s = updateStats(s, fed, none, i * p, p);
        for (let j = 0; j < p; j++) seqInputs[r][(from + i) * p + j] = normalise(fed[i * p + j], s.mu, s.sigma);
      }
      stats[r] = s;
      lastMu[r] = s.mu;
      lastSigma[r] = s.sigma;
    }
    const next = await forward(from + perStep);
    for (let r = 0; r < rows; r++) {
      for (let k = 0; k < o * q; k++) forecast[r][(step + 1) * o * q + k] = denormalise(next.point[r * o * q + k], lastMu[r], lastSigma[r]);
    }
  }
  return { forecast, spread };
}

/**
 * The reference's forecast for series of one horizon, with the manifest's flags (the continuous
 * quantile head is left out past its length, which the reference refuses to compile).
 */
export async function predictTimesFM25(run: Runner, m: TimesFM25Manifest, histories: readonly Float64Array[], horizon: number): Promise<TimesFMForecast[]> {
  const p = m.patch_size;
  const o = m.output_patch_len;
  const q = m.quantile_levels.length + 1;
  const C = m.context_length;
  const maxHorizon = Math.ceil(horizon / o) * o;
  if (C + maxHorizon > m.context_limit) {
    throw new ModelInputError(`timesfm-2p5 serves at most ${m.context_limit - C} steps of horizon with its context of ${C}; got ${horizon}`);
  }
  const flags: Flags = {
    ...m.forecast_config,
    use_continuous_quantile_head: m.forecast_config.use_continuous_quantile_head && maxHorizon <= m.output_quantile_len,
  };
  const steps = Math.ceil(horizon / o) - 1; // (max_horizon - 1) // o

  // forecast(): fill, cut or pad to the compiled context.
  const rows = histories.length;
  const padded = histories.map((h) => {
    const value = fillMissing(h);
    const w = value.length;
    const input = new Float64Array(C);
    const mask = new Uint8Array(C);
    if (w >= C) input.set(value.subarray(w - C));
    else {
      input.set(value, C - w);
      mask.fill(1, 0, C - w);
    }
    return { input, mask, length: Math.min(w, C) };
  });

  // compiled decode: positivity and the global normalisation look at the whole padded context.
  const positive = padded.map(({ input }) => input.every((v) => v >= 0));
  const mu = new Float64Array(rows);
  const sigma = new Float64Array(rows);
  const inputs = padded.map(({ input }, r) => {
    if (!flags.normalize_inputs) return input;
    let sum = 0;
    for (let i = 0; i < C; i++) sum += input[i];
    const mean = sum / C;
    let squares = 0;
    for (let i = 0; i < C; i++) squares += (input[i] - mean) ** 2;
    const sd = Math.sqrt(squares / (C - 1));
    mu[r] = mean;
    sigma[r] = sd;
    const out = new Float64Array(C);
    const divisor = sd < TOLERANCE ? 1 : sd;
    for (let i = 0; i < C; i++) out[i] = (input[i] - mean) / divisor;
    return out;
  });

  // Leading patches that are padding in every row change nothing; they are not sent.
  const patches = Math.max(...padded.map((x) => Math.ceil(x.length / p)));
  const skip = C - patches * p;
  const sent = inputs.map((x) => x.subarray(skip));
  const sentMasks = padded.map((x) => x.mask.subarray(skip));
  const negate = (x: Float64Array) => {
    const out = new Float64Array(x.length);
    for (let i = 0; i < x.length; i++) out[i] = -x[i];
    return out;
  };
  const batchInputs = flags.force_flip_invariance ? [...sent, ...sent.map(negate)] : sent;
  const batchMasks = flags.force_flip_invariance ? [...sentMasks, ...sentMasks] : sentMasks;
  const decoded = await decode(run, m, batchInputs, batchMasks, steps);

  return histories.map((_, r) => {
    const length = (steps + 1) * o;
    const full = decoded.forecast[r].slice();
    const spread = decoded.spread[r].slice();
    if (flags.force_flip_invariance) {
      // flip_quantile_fn: channel 0 stays, channels 1..9 reverse; then (x - flipped) / 2.
      const flippedFull = decoded.forecast[rows + r];
      const flippedSpread = decoded.spread[rows + r];
      const flip = (c: number) => (c === 0 ? 0 : q - c);
      for (let t = 0; t < length; t++) for (let c = 0; c < q; c++) full[t * q + c] = (full[t * q + c] - flippedFull[t * q + flip(c)]) / 2;
      for (let t = 0; t < m.output_quantile_len; t++) for (let c = 0; c < q; c++) spread[t * q + c] = (spread[t * q + c] - flippedSpread[t * q + flip(c)]) / 2;
    }
    const median = m.decode_index;
    if (flags.use_continuous_quantile_head) {
      for (let t = 0; t < maxHorizon; t++) {
        for (let c = 1; c < q; c++) {
          if (c === median) continue;
          full[t * q + c] = spread[t * q + c] - spread[t * q + median] + full[t * q + median];
        }
      }
    }
    const channels = Array.from({ length: q }, () => new Float64Array(horizon));
    for (let t = 0; t < horizon; t++) for (let c = 0; c < q; c++) channels[c][t] = full[t * q + c];
    if (flags.fix_quantile_crossing) {
      for (let t = 0; t < horizon; t++) {
        for (let c = median - 1; c >= 1; c--) channels[c][t] = channels[c][t] < channels[c + 1][t] ? channels[c][t] : channels[c + 1][t];
        for (let c = median + 1; c < q; c++) channels[c][t] = channels[c][t] > channels[c - 1][t] ? channels[c][t] : channels[c - 1][t];
      }
    }
    if (flags.normalize_inputs) for (const ch of channels) for (let t = 0; t < horizon; t++) ch[t] = ch[t] * sigma[r] + mu[r];
    if (positive[r]) for (const ch of channels) for (let t = 0; t < horizon; t++) ch[t] = Math.max(ch[t], 0);
    return { point: channels[median].slice(), channels };
  });
}

/** The requested output: the point forecast, and the requested levels from channels 1..9 (TimesFM 2 and 2.5). */
export function timesfmOutput(
  m: { readonly quantile_levels: readonly number[] },
  f: TimesFMForecast,
  requested: readonly number[],
  horizon: number,
): ForecastOutput {
  return { mean: f.point, quantiles: mapQuantileSteps(m.quantile_levels, (k) => f.channels[k + 1], requested, horizon) };
}

/**
 * Forecasts tasks in input order. Tasks without covariates are forecast from the target alone,
 * in batches. Tasks with known-future covariates go through the reference's in-context regression
 * (timesfm-xreg.ts), one linear fit per set of tasks with the same horizon, covariate names and
 * creation time (so a backtest's fit never uses values after the forecast's creation date).
 */
export async function forecastTimesFM25(run: Runner, m: TimesFM25Manifest, tasks: readonly ForecastTask[], batchSize = 256): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = new Array(tasks.length);
  for (const { horizon, indices, future } of taskSets('timesfm-2p5', tasks)) {
    const forecasts = future
      ? await predictTimesFM25WithCovariates(
          run,
          m,
          indices.map((i, k) => ({ target: tasks[i].history, future: future[k] })),
          horizon,
          batchSize,
        )
      : await predictInBatches(
          run,
          m,
          indices.map((i) => tasks[i].history),
          horizon,
          batchSize,
        );
    indices.forEach((taskIndex, k) => (out[taskIndex] = timesfmOutput(m, forecasts[k], tasks[taskIndex].quantiles, horizon)));
  }
  return out;
}

async function predictInBatches(
  run: Runner,
  m: TimesFM25Manifest,
  histories: readonly Float64Array[],
  horizon: number,
  batchSize: number,
): Promise<TimesFMForecast[]> {
  const out: TimesFMForecast[] = [];
  for (let start = 0; start < histories.length; start += batchSize)
    out.push(...(await predictTimesFM25(run, m, histories.slice(start, start + batchSize), horizon)));
  return out;
}

/**
 * The reference's forecast_with_covariates ("xreg + timesfm"): one linear fit over all the
 * series, TimesFM on each residual, the horizon's fit added back to the point and every channel,
 * then the target's own scale restored.
 */
export async function predictTimesFM25WithCovariates(
  run: Runner,
  m: TimesFM25Manifest,
  series: readonly XRegSeries[],
  horizon: number,
  batchSize = 256,
): Promise<TimesFMForecast[]> {
  return forecastWithRegression(series, horizon, (residuals) => predictInBatches(run, m, residuals, horizon, batchSize));
}

/** The service's timesfm-2p5 (MODELS_DIR/timesfm-2p5). */
export const timesfm25Model = (settings: ModelSettings): GlobalModel =>
  onnxModel('timesfm-2p5', settings, (run, manifest, tasks) => forecastTimesFM25(run, manifest, tasks));
