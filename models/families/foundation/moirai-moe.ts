/**
 * Moirai-MoE on ONNX Runtime: the pre-processing of the reference's gluonts predictor
 * (`MoiraiMoEForecast.create_predictor`, uni2ts 2.0.0; packing shared in moirai-common.ts) around an
 * exported `MoiraiMoEModule.forward` that gives each step's mixture parameters (moirai-mixture.ts).
 * The first patch's quantiles and mean are the distribution's own; past it, sampled paths as the
 * reference, from a generator seeded by the series' values. Why, and how it is tested:
 * docs/foundation-models.md, "`moirai-moe`".
 */
import type { ForecastOutput, GlobalModel, ModelSettings, ForecastTask } from '../../contract/model-interface.ts';
import { layoutGroups, packSequence, runPacked, type MoiraiInput, type Sequence } from './moirai-common.ts';
import { mixtureMean, mixtureQuantile, Sampler, uniforms } from './moirai-mixture.ts';
import { requireHorizonInRange } from './horizon-range.ts';
import { onnxModel, type Runner } from './onnx-session.ts';
import type { MoiraiMoEManifest } from './model-store.ts';

const CHANNELS = 14;

export interface MoiraiMoEForecast {
  readonly mean: Float64Array;
  /** [level][step] at the requested levels. */
  readonly quantiles: Float64Array[];
}

export interface MoiraiMoEOptions {
  /** Paths of the roll-out past the first patch (default: the manifest's num_samples). */
  readonly numSamples?: number;
}

/** A 32-bit seed from a series' values and horizon (FNV-1a over their float32 bits). */
export function seedOf(input: MoiraiInput, horizon: number): number {
  let h = 0x811c9dc5 ^ horizon;
  const bits = new Uint32Array(1);
  const view = new Float32Array(bits.buffer);
  const mix = (values: Float64Array) => {
    for (let i = 0; i < values.length; i++) {
      view[0] = values[i];
      h = Math.imul(h ^ bits[0], 0x01000193) >>> 0;
    }
  };
  mix(input.target);
  input.future.forEach(mix);
  input.past.forEach(mix);
  return h >>> 0;
}

/** gluonts SampleForecast.quantile: the sorted sample at round((n - 1) q), numpy's half-to-even rounding. */
function nearestRank(sorted: Float64Array, level: number): number {
  const x = (sorted.length - 1) * level;
  let r = Math.round(x);
  if (Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 !== 0) r -= 1;
  return sorted[r];
}

/** The graph's parameters of each series at one token: [row][step * 14 + channel]. */
async function stepParams(run: Runner, m: MoiraiMoEManifest, rows: readonly Sequence[], token: number): Promise<Float32Array> {
  return runPacked(run, m, rows, token, 'params', [m.patch_size, CHANNELS]);
}

/**
 * The distribution parameters of forecast patch `patch` (0-based) of each series, its earlier
 * forecast patches given as `fed` values ([series][step], at least patch * patch_size long):
 * what the reference's roll-out samples that patch from. [series][step * 14 + channel].
 */
export async function patchParams(
  run: Runner,
  m: MoiraiMoEManifest,
  inputs: readonly MoiraiInput[],
  horizon: number,
  patch: number,
  fed: readonly Float64Array[] = [],
): Promise<Float32Array[]> {
  const P = m.patch_size;
  const pastTokens = m.context_length / P;
  const rows = inputs.map((input, r) => {
    const seq = packSequence(m, input, horizon);
    for (let k = 0; k < patch; k++) {
      for (let p = 0; p < P; p++) seq.target[(pastTokens + k) * P + p] = fed[r][k * P + p] ?? 0;
      seq.predictionMask[pastTokens + k] = 0;
    }
    return seq;
  });
  const out = await stepParams(run, m, rows, pastTokens + patch - 1);
  return rows.map((_, r) => out.subarray(r * P * CHANNELS, (r + 1) * P * CHANNELS));
}

/** `MoiraiMoEForecast.forward` on series of one layout and horizon, as the header describes. */
export async function predictMoiraiMoE(
  run: Runner,
  m: MoiraiMoEManifest,
  inputs: readonly MoiraiInput[],
  horizon: number,
  levels: readonly number[],
  options: MoiraiMoEOptions = {},
): Promise<MoiraiMoEForecast[]> {
  const P = m.patch_size;
  const S = options.numSamples ?? m.num_samples;
  const scaleN = m.mixture.normal_scale;
  const pastTokens = m.context_length / P;
  requireHorizonInRange('moirai-moe', m, horizon);
  const futureTokens = Math.ceil(horizon / P);
  const seqs = inputs.map((input) => packSequence(m, input, horizon));
  const first = await stepParams(run, m, seqs, pastTokens - 1);
  const out = inputs.map(() => ({ mean: new Float64Array(horizon), quantiles: levels.map(() => new Float64Array(horizon)) }));
  const firstSteps = Math.min(P, horizon);
  seqs.forEach((_, b) => {
    for (let t = 0; t < firstSteps; t++) {
      const p = first.subarray((b * P + t) * CHANNELS, (b * P + t + 1) * CHANNELS);
      out[b].mean[t] = mixtureMean(p);
      levels.forEach((q, k) => (out[b].quantiles[k][t] = mixtureQuantile(p, q, scaleN)));
    }
  });
  if (futureTokens === 1) return out;

  // The roll-out: S paths per series, each a copy of the series' sequence.
  const samplers = inputs.map((input) => new Sampler(uniforms(seedOf(input, horizon))));
  const copies = seqs.flatMap((s) => Array.from({ length: S }, () => ({ ...s, target: s.target.slice(), predictionMask: s.predictionMask.slice() })));
  const paths = copies.map(() => new Float32Array(futureTokens * P));
  const draw = (params: Float32Array, row: number, b: number, k: number) => {
    const copy = copies[row];
    for (let p = 0; p < P; p++) {
      const value = samplers[b].mixture(params.subarray(p * CHANNELS, (p + 1) * CHANNELS), scaleN);
      paths[row][k * P + p] = value;
      copy.target[(pastTokens + k) * P + p] = value;
    }
    copy.predictionMask[pastTokens + k] = 0;
  };
  for (let b = 0; b < seqs.length; b++) for (let s = 0; s < S; s++) draw(first.subarray(b * P * CHANNELS, (b + 1) * P * CHANNELS), b * S + s, b, 0);
  for (let k = 1; k < futureTokens; k++) {
    const params = await stepParams(run, m, copies, pastTokens + k - 1);
    for (let b = 0; b < seqs.length; b++) {
      for (let s = 0; s < S; s++) draw(params.subarray((b * S + s) * P * CHANNELS, (b * S + s + 1) * P * CHANNELS), b * S + s, b, k);
    }
  }
  const values = new Float64Array(S);
  seqs.forEach((_, b) => {
    for (let t = P; t < horizon; t++) {
      let sum = 0;
      for (let s = 0; s < S; s++) sum += values[s] = paths[b * S + s][t];
      out[b].mean[t] = sum / S;
      values.sort();
      levels.forEach((q, k) => (out[b].quantiles[k][t] = nearestRank(values, q)));
    }
  });
  return out;
}

/**
 * Forecasts tasks in input order, tasks of one layout together, `batchSize` series at a time
 * (the roll-out runs num_samples rows per series).
 */
export async function forecastMoiraiMoE(run: Runner, m: MoiraiMoEManifest, tasks: readonly ForecastTask[], batchSize = 16): Promise<ForecastOutput[]> {
  const out: ForecastOutput[] = new Array(tasks.length);
  for (const { horizon, indices, inputs } of layoutGroups('moirai-moe', tasks)) {
    // Series of one call share the requested levels when they ask the same; else one call each level set.
    const byLevels = new Map<string, number[]>();
    indices.forEach((taskIndex, k) => {
      const key = tasks[taskIndex].quantiles.join(',');
      byLevels.set(key, [...(byLevels.get(key) ?? []), k]);
    });
    for (const members of byLevels.values()) {
      const levels = tasks[indices[members[0]]].quantiles;
      for (let start = 0; start < members.length; start += batchSize) {
        const chunk = members.slice(start, start + batchSize);
        const forecasts = await predictMoiraiMoE(
          run,
          m,
          chunk.map((k) => inputs[k]),
          horizon,
          levels,
        );
        chunk.forEach((k, j) => (out[indices[k]] = { mean: forecasts[j].mean, quantiles: forecasts[j].quantiles }));
      }
    }
  }
  return out;
}

/** The service's moirai-moe (MODELS_DIR/moirai-moe). */
export const moiraiMoEModel = (settings: ModelSettings): GlobalModel =>
  onnxModel('moirai-moe', settings, (run, manifest, tasks) => forecastMoiraiMoE(run, manifest, tasks));
