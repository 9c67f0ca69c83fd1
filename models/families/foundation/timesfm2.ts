/**
 * TimesFM 2.0 on ONNX Runtime: the pre- and post-processing of the reference's
 * `TimesFmTorch.forecast` (timesfm 1.3) and its decoder's `decode` around an exported forward of
 * the network, which normalises by the first patch with three observed values (tools/export/timesfm2.py):
 * missing values as TimesFM 2.5, the mean channel rolled out patch by patch, a frequency class per
 * series, the median (default) or mean channel as the point, covariates through timesfm-xreg.ts.
 * Output channels: 0 the mean, then the manifest's levels. Contract: docs/foundation-models.md.
 */
import type { ForecastOutput, ForecastTask, GlobalModel, ModelSettings } from '../../contract/model-interface.ts';
import { float32, int64, onnxModel, output, type Runner } from './onnx-session.ts';
import type { TimesFM2Manifest } from './model-store.ts';
import { fillMissing, timesfmOutput, type TimesFMForecast } from './timesfm2p5.ts';
import { forecastWithRegression, taskSets, type XRegSeries } from './timesfm-xreg.ts';

export interface TimesFM2Input {
  readonly history: Float64Array;
  /** 0 high (up to daily), 1 medium (weekly to quarterly), 2 low (yearly). */
  readonly frequencyClass: number;
}

const FREQUENCY_CLASS: Record<string, number> = { '10S': 0, min: 0, '5min': 0, '10min': 0, '15min': 0, '30min': 0, H: 0, D: 0, W: 1, M: 1, Q: 1, Y: 2 };

/** The reference's freq_map; 0 when the request has no frequency code (the reference's default). */
export const frequencyClass = (freq: string | undefined): number => (freq === undefined ? 0 : (FREQUENCY_CLASS[freq] ?? 0));

/** The reference's forecast for series of one horizon: [series] -> point and channels [step]. */
export async function predictTimesFM2(run: Runner, m: TimesFM2Manifest, inputs: readonly TimesFM2Input[], horizon: number): Promise<TimesFMForecast[]> {
  const C = m.context_length;
  const O = m.output_patch_len;
  const Q = m.quantile_levels.length + 1;
  const rows = inputs.length;
  const steps = Math.ceil(horizon / O);
  // The whole timeline per row: the padded context, then the appended roll-out.
  const width = C + steps * O;
  const values = new Float32Array(rows * width);
  const padding = new Float32Array(rows * width);
  inputs.forEach(({ history }, r) => {
    const filled = fillMissing(history);
    const kept = filled.subarray(Math.max(0, filled.length - C));
    const front = C - kept.length;
    padding.fill(1, r * width, r * width + front);
    values.set(kept, r * width + front);
  });
  const freq = BigInt64Array.from(inputs, (i) => BigInt(i.frequencyClass));
  // Every row's channels over the horizon in one buffer, channel by channel (views of it).
  const kept = new Float64Array(rows * Q * horizon);
  const channels: Float64Array[][] = [];
  for (let r = 0; r < rows; r++) {
    const perChannel: Float64Array[] = [];
    for (let q = 0; q < Q; q++) perChannel.push(kept.subarray((r * Q + q) * horizon, (r * Q + q + 1) * horizon));
    channels.push(perChannel);
  }

  for (let step = 0; step < steps; step++) {
    // The last C values of the timeline so far, and their padding marks.
    const end = C + step * O;
    const inputTs = new Float32Array(rows * C);
    const inputPadding = new Float32Array(rows * C);
    for (let r = 0; r < rows; r++) {
      inputTs.set(values.subarray(r * width + end - C, r * width + end), r * C);
      inputPadding.set(padding.subarray(r * width + end - C, r * width + end), r * C);
    }
    const out = await run({ input_ts: float32(inputTs, [rows, C]), input_padding: float32(inputPadding, [rows, C]), freq: int64(freq, [rows, 1]) });
    const patch = output(out, 'outputs', [rows, O, Q]);
    const stepsKept = Math.min(O, horizon - step * O);
    for (let r = 0; r < rows; r++) {
      for (let t = 0; t < O; t++) values[r * width + end + t] = patch[(r * O + t) * Q]; // the mean is fed back
      for (let q = 0; q < Q; q++) {
        const channel = channels[r][q];
        for (let t = 0; t < stepsKept; t++) channel[step * O + t] = patch[(r * O + t) * Q + q];
      }
    }
  }
  const pointChannel = m.point_output === 'median' ? m.quantile_levels.indexOf(0.5) + 1 : 0;
  return channels.map((perChannel) => ({ point: perChannel[pointChannel].slice(), channels: perChannel }));
}

async function predictInBatches(
  run: Runner,
  m: TimesFM2Manifest,
  inputs: readonly TimesFM2Input[],
  horizon: number,
  batchSize: number,
): Promise<TimesFMForecast[]> {
  const out: TimesFMForecast[] = [];
  for (let start = 0; start < inputs.length; start += batchSize) out.push(...(await predictTimesFM2(run, m, inputs.slice(start, start + batchSize), horizon)));
  return out;
}

/**
 * The reference's forecast_with_covariates ("xreg + timesfm"): one linear fit over all the
 * series, TimesFM on each residual, the horizon's fit added back (to every channel; the reference
 * returns the point alone), then the target's own scale restored.
 */
export async function predictTimesFM2WithCovariates(
  run: Runner,
  m: TimesFM2Manifest,
  series: readonly (XRegSeries & { frequencyClass: number })[],
  horizon: number,
  batchSize = 256,
): Promise<TimesFMForecast[]> {
  return forecastWithRegression(series, horizon, (residuals) =>
    predictInBatches(
      run,
      m,
      residuals.map((history, i) => ({ history, frequencyClass: series[i].frequencyClass })),
      horizon,
      batchSize,
    ),
  );
}

/**
 * Forecasts tasks in input order: from the target alone in batches per horizon, or with their
 * known-future covariates in sets of one horizon, covariate names and creation time (so a
 * backtest's fit never uses values after its forecast's creation date).
 */
export async function forecastTimesFM2(run: Runner, m: TimesFM2Manifest, tasks: readonly ForecastTask[], batchSize = 256): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = new Array(tasks.length);
  for (const { horizon, indices, future } of taskSets('timesfm-2', tasks)) {
    const inputs = indices.map((i) => ({ history: tasks[i].history, frequencyClass: frequencyClass(tasks[i].freq) }));
    const forecasts = future
      ? await predictTimesFM2WithCovariates(
          run,
          m,
          inputs.map((input, k) => ({ target: input.history, future: future[k], frequencyClass: input.frequencyClass })),
          horizon,
          batchSize,
        )
      : await predictInBatches(run, m, inputs, horizon, batchSize);
    indices.forEach((taskIndex, k) => (out[taskIndex] = timesfmOutput(m, forecasts[k], tasks[taskIndex].quantiles, horizon)));
  }
  return out;
}

/** The service's timesfm-2 (MODELS_DIR/timesfm-2). */
export const timesfm2Model = (settings: ModelSettings): GlobalModel =>
  onnxModel('timesfm-2', settings, (run, manifest, tasks) => forecastTimesFM2(run, manifest, tasks));
