/**
 * Moirai 2.0 on ONNX Runtime: the pre- and post-processing of the reference's gluonts predictor
 * (`Moirai2Forecast.create_predictor`, uni2ts 2.0.0 with gluonts 0.14) around an exported
 * `Moirai2Module.forward` (tools/export/moirai2.py). Inputs are packed as moirai-common.ts does;
 * one call predicts `num_predict_token` patches, and past that the reference's recursive
 * multi-quantile roll-out runs. The point forecast is the 0.5 quantile. Step by step:
 * docs/foundation-models.md, "`moirai-2`".
 */
import type { ForecastOutput, ForecastTask, GlobalModel, ModelSettings } from '../../contract/model-interface.ts';
import { layoutGroups, moiraiInput, packSequence, runPacked, type MoiraiInput } from './moirai-common.ts';
import { mapQuantileSteps } from './quantiles.ts';
import { requireHorizonInRange } from './horizon-range.ts';
import { onnxModel, type Runner } from './onnx-session.ts';
import type { Moirai2Manifest } from './model-store.ts';

export { causalMeanImpute } from './moirai-common.ts';
export type Moirai2Input = MoiraiInput;

export interface Moirai2Forecast {
  readonly point: Float64Array;
  /** [level][step] at the manifest's quantile levels. */
  readonly quantiles: Float64Array[];
}

/** torch.quantile's linear rule on sorted float32 values, its rank computed in float32 as torch does. */
function torchQuantile(sorted: Float64Array, level: number): number {
  const rank = Math.fround(Math.fround(level) * (sorted.length - 1));
  const below = Math.floor(rank);
  const weight = Math.fround(rank - below);
  if (weight === 0) return sorted[below];
  const a = sorted[below];
  const b = sorted[Math.min(below + 1, sorted.length - 1)];
  return Math.fround(weight < 0.5 ? a + weight * (b - a) : b - (b - a) * (1 - weight));
}

/** `Moirai2Forecast.forward` on series of one layout and horizon. */
export async function predictMoirai2(run: Runner, m: Moirai2Manifest, inputs: readonly Moirai2Input[], horizon: number): Promise<Moirai2Forecast[]> {
  const P = m.patch_size;
  const Q = m.quantile_levels.length;
  const T = m.num_predict_token;
  const pastTokens = m.context_length / P;
  requireHorizonInRange('moirai-2', m, horizon);
  const futureTokens = Math.ceil(horizon / P);
  const seqs = inputs.map((input) => packSequence(m, input, horizon));
  const width = T * Q * P;
  const readHead = (rows: typeof seqs, token: number) => runPacked(run, m, rows, token, 'preds', [width]);
  // quantile_prediction over the target's forecast tokens: [series][token * Q * P + q * P + p].
  const forecast = inputs.map(() => new Float32Array(futureTokens * Q * P));
  const first = await readHead(seqs, pastTokens - 1);
  const firstTokens = Math.min(futureTokens, T);
  seqs.forEach((_, b) => forecast[b].set(first.subarray(b * width, b * width + firstTokens * Q * P)));

  if (futureTokens > T) {
    // One copy of each series per quantile level, its forecast tokens holding that level's path.
    const copies = seqs.flatMap((s) => m.quantile_levels.map(() => ({ ...s, target: s.target.slice(), predictionMask: s.predictionMask.slice() })));
    const feed = (b: number, token: number, values: (q: number, p: number) => number) => {
      for (let q = 0; q < Q; q++) {
        const copy = copies[b * Q + q];
        for (let p = 0; p < P; p++) copy.target[(pastTokens + token) * P + p] = values(q, p);
        copy.predictionMask[pastTokens + token] = 0;
      }
    };
    for (let b = 0; b < seqs.length; b++) for (let k = 0; k < T; k++) feed(b, k, (q, p) => forecast[b][(k * Q + q) * P + p]);
    let filled = T;
    const pool = new Float64Array(Q * Q);
    while (filled < futureTokens) {
      const step = Math.min(T, futureTokens - filled);
      const preds = await readHead(copies, pastTokens + filled - 1);
      for (let b = 0; b < seqs.length; b++) {
        for (let k = 0; k < step; k++) {
          for (let p = 0; p < P; p++) {
            for (let from = 0; from < Q; from++) for (let q = 0; q < Q; q++) pool[from * Q + q] = preds[(b * Q + from) * width + (k * Q + q) * P + p];
            pool.sort();
            for (let q = 0; q < Q; q++) forecast[b][((filled + k) * Q + q) * P + p] = torchQuantile(pool, m.quantile_levels[q]);
          }
          feed(b, filled + k, (q, p) => forecast[b][((filled + k) * Q + q) * P + p]);
        }
      }
      filled += step;
    }
  }

  const median = m.quantile_levels.indexOf(0.5);
  return forecast.map((f) => {
    const quantiles = m.quantile_levels.map((_, q) => {
      const out = new Float64Array(horizon);
      for (let t = 0; t < horizon; t++) out[t] = f[(Math.floor(t / P) * Q + q) * P + (t % P)];
      return out;
    });
    return { point: quantiles[median].slice(), quantiles };
  });
}

/** A task as the predictor's data entry: covariates in name order (the fixture's order too). */
export const moirai2Input = (task: ForecastTask): Moirai2Input => moiraiInput('moirai-2', task);

/**
 * Forecasts tasks in input order: tasks of one horizon and the same covariate names share
 * network calls (series never interact: each attends only to its own tokens), `batchSize` series
 * at a time (the roll-out runs Q rows per series).
 */
export async function forecastMoirai2(run: Runner, m: Moirai2Manifest, tasks: readonly ForecastTask[], batchSize = 64): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = new Array(tasks.length);
  for (const { horizon, indices, inputs } of layoutGroups('moirai-2', tasks)) {
    for (let start = 0; start < inputs.length; start += batchSize) {
      const forecasts = await predictMoirai2(run, m, inputs.slice(start, start + batchSize), horizon);
      forecasts.forEach((f, k) => {
        const task = tasks[indices[start + k]];
        out[indices[start + k]] = { mean: f.point, quantiles: mapQuantileSteps(m.quantile_levels, (q) => f.quantiles[q], task.quantiles, horizon) };
      });
    }
  }
  return out;
}

/** The service's moirai-2 (MODELS_DIR/moirai-2). */
export const moirai2Model = (settings: ModelSettings): GlobalModel =>
  onnxModel('moirai-2', settings, (run, manifest, tasks) => forecastMoirai2(run, manifest, tasks));
