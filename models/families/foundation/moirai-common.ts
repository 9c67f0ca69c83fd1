/**
 * What Moirai 2.0 and Moirai-MoE share (uni2ts 2.0.0, gluonts 0.14): the input transform of their
 * gluonts predictors, `_convert`'s packed sequence (identical in both for one patch size), and the
 * call of an exported graph on packed sequences (tools/export/moirai2.py's input contract). Missing
 * target values are filled by gluonts' causal mean; covariates are extra variates. Step by step:
 * docs/foundation-models.md, "`moirai-2`".
 */
import type { CovariateValue, ForecastTask } from '../../contract/model-interface.ts';
import { ModelInputError } from '../../contract/model-interface.ts';
import { bool, float32, int64, output, type Runner } from './onnx-session.ts';

/** One series as the predictor reads it; NaN marks a missing value. */
export interface MoiraiInput {
  readonly target: Float64Array;
  /** Known-future covariates (feat_dynamic_real), each over the history then the horizon. */
  readonly future: readonly Float64Array[];
  /** Past-only covariates (past_feat_dynamic_real), each as long as the target. */
  readonly past: readonly Float64Array[];
}

/** The manifest fields the packing reads. */
export interface MoiraiLayout {
  readonly context_length: number;
  readonly patch_size: number;
}

/**
 * gluonts' CausalMeanValueImputation (0.14) on float32 values: a missing value becomes the mean
 * of every earlier value after LastValueImputation (forward fill, leading gaps from the first
 * observation), the first one that first observation; a lone value or an all-missing series
 * gets 0 (DummyValueImputation). The sums are float64, as numpy computes them.
 */
export function causalMeanImpute(values: Float32Array): Float32Array {
  const n = values.length;
  const out = values.slice();
  const first = values.findIndex((v) => !Number.isNaN(v));
  if (first < 0 || n === 1) return out.map((v) => (Number.isNaN(v) ? 0 : v));
  if (first === n || !values.some(Number.isNaN)) return out;
  let last = values[first];
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const filled = Number.isNaN(values[i]) ? last : values[i];
    last = filled;
    if (Number.isNaN(values[i])) out[i] = i === 0 ? filled : sum / i;
    sum += filled;
  }
  return out;
}

/** A row's values and observed flags over `length` steps, as the instance splitter pads them. */
interface Piece {
  values: Float32Array;
  observed: Uint8Array;
}

/** The last `context` steps of a series (left-padded with unobserved zeros), then `after` more steps. */
function splitPiece(values: Float32Array, observed: Uint8Array, n: number, context: number, after: number): { past: Piece; future: Piece } {
  const take = Math.min(n, context);
  const past = { values: new Float32Array(context), observed: new Uint8Array(context) };
  past.values.set(values.subarray(n - take, n), context - take);
  past.observed.set(observed.subarray(n - take, n), context - take);
  return { past, future: { values: values.slice(n, n + after), observed: observed.slice(n, n + after) } };
}

/** AddObservedValuesIndicator with DummyValueImputation(0): a covariate row. */
function covariateRow(values: Float64Array): { values: Float32Array; observed: Uint8Array } {
  const out = new Float32Array(values.length);
  const observed = new Uint8Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const known = !Number.isNaN(values[i]);
    out[i] = known ? values[i] : 0;
    observed[i] = known ? 1 : 0;
  }
  return { values: out, observed };
}

/** The packed sequence of one series: what `_convert` gives, one row of the graph's inputs. */
export interface Sequence {
  target: Float32Array;
  observed: Uint8Array;
  sampleId: BigInt64Array;
  timeId: BigInt64Array;
  variateId: BigInt64Array;
  predictionMask: Uint8Array;
}

export function packSequence(m: MoiraiLayout, input: MoiraiInput, horizon: number): Sequence {
  const P = m.patch_size;
  const C = m.context_length;
  const pastTokens = C / P;
  const futureTokens = Math.ceil(horizon / P);
  const n = input.target.length;
  const rawTarget = new Float32Array(input.target);
  const target = causalMeanImpute(rawTarget);
  const targetObserved = new Uint8Array(n);
  for (let i = 0; i < n; i++) targetObserved[i] = Number.isNaN(rawTarget[i]) ? 0 : 1;
  const pad = Math.max(C - n, 0);

  // Per context patch: padding only (sample id 0), and the time ids of _generate_time_id.
  const pastSample = new BigInt64Array(pastTokens);
  const pastTime = new BigInt64Array(pastTokens);
  const targetPiece = splitPiece(target, targetObserved, n, C, 0).past;
  let seen = 0;
  for (let t = 0; t < pastTokens; t++) {
    pastSample[t] = (t + 1) * P > pad ? 1n : 0n;
    let any = false;
    for (let k = t * P; k < (t + 1) * P; k++) any ||= targetPiece.observed[k] === 1;
    if (any || seen > 0) seen++;
    pastTime[t] = BigInt(Math.max(seen - 1, 0));
  }
  const firstFutureTime = (pastTokens > 0 ? pastTime[pastTokens - 1] : -1n) + 1n;

  const variates = 1 + input.future.length + input.past.length;
  const tokens = variates * pastTokens + (1 + input.future.length) * futureTokens;
  const seq: Sequence = {
    target: new Float32Array(tokens * P),
    observed: new Uint8Array(tokens * P),
    sampleId: new BigInt64Array(tokens),
    timeId: new BigInt64Array(tokens),
    variateId: new BigInt64Array(tokens),
    predictionMask: new Uint8Array(tokens),
  };
  let at = 0;
  const pastBlock = (piece: Piece, variate: number) => {
    seq.target.set(piece.values, at * P);
    seq.observed.set(piece.observed, at * P);
    seq.sampleId.set(pastSample, at);
    seq.timeId.set(pastTime, at);
    seq.variateId.fill(BigInt(variate), at, at + pastTokens);
    at += pastTokens;
  };
  // Forecast tokens: values right-padded with zeros, their padding unobserved.
  const futureBlock = (piece: Piece, variate: number, predicted: boolean) => {
    seq.target.set(piece.values, at * P);
    seq.observed.set(piece.observed, at * P);
    for (let j = 0; j < futureTokens; j++) {
      seq.sampleId[at + j] = 1n;
      seq.timeId[at + j] = firstFutureTime + BigInt(j);
      seq.variateId[at + j] = BigInt(variate);
      seq.predictionMask[at + j] = predicted ? 1 : 0;
    }
    at += futureTokens;
  };
  pastBlock(targetPiece, 0);
  futureBlock({ values: new Float32Array(horizon), observed: new Uint8Array(horizon).fill(1) }, 0, true);
  const known = input.future.map((f) => {
    const row = covariateRow(f);
    return splitPiece(row.values, row.observed, n, C, horizon);
  });
  known.forEach((k, d) => pastBlock(k.past, 1 + d));
  known.forEach((k, d) => futureBlock(k.future, 1 + d, false));
  input.past.forEach((p, d) => {
    const row = covariateRow(p);
    pastBlock(splitPiece(row.values, row.observed, n, C, 0).past, 1 + input.future.length + d);
  });
  return seq;
}

/** Runs the graph on sequences of one layout, reading output `name` (per row and read token: `shape`) at one token. */
export async function runPacked(
  run: Runner,
  m: MoiraiLayout,
  rows: readonly Sequence[],
  token: number,
  name: string,
  shape: readonly number[],
): Promise<Float32Array> {
  const P = m.patch_size;
  const tokens = rows[0].sampleId.length;
  const cat = <T extends Float32Array | Uint8Array | BigInt64Array>(pick: (s: Sequence) => T, make: (n: number) => T) => {
    const size = pick(rows[0]).length;
    const out = make(rows.length * size);
    rows.forEach((s, r) => out.set(pick(s) as never, r * size));
    return out;
  };
  const out = await run({
    target: float32(
      cat(
        (s) => s.target,
        (n) => new Float32Array(n),
      ),
      [rows.length, tokens, P],
    ),
    observed_mask: bool(
      cat(
        (s) => s.observed,
        (n) => new Uint8Array(n),
      ),
      [rows.length, tokens, P],
    ),
    sample_id: int64(
      cat(
        (s) => s.sampleId,
        (n) => new BigInt64Array(n),
      ),
      [rows.length, tokens],
    ),
    time_id: int64(
      cat(
        (s) => s.timeId,
        (n) => new BigInt64Array(n),
      ),
      [rows.length, tokens],
    ),
    variate_id: int64(
      cat(
        (s) => s.variateId,
        (n) => new BigInt64Array(n),
      ),
      [rows.length, tokens],
    ),
    prediction_mask: bool(
      cat(
        (s) => s.predictionMask,
        (n) => new Uint8Array(n),
      ),
      [rows.length, tokens],
    ),
    read_tokens: int64(BigInt64Array.of(BigInt(token)), [1]),
  });
  return output(out, name, [rows.length, 1, ...shape]);
}

function numeric(model: string, values: readonly CovariateValue[], name: string): Float64Array {
  return Float64Array.from(values, (v) => {
    if (typeof v !== 'number') throw new ModelInputError(`${model} takes numeric covariates only; '${name}' has the string value '${v}'`);
    return v;
  });
}

/** A task as the predictor's data entry: covariates in name order (the fixture's order too). */
export function moiraiInput(model: string, task: ForecastTask): MoiraiInput {
  const n = task.history.length;
  const cov = task.covariates;
  if (!cov) return { target: task.history, future: [], past: [] };
  if (Object.keys(cov.static).length > 0) throw new ModelInputError(`${model} takes past and known-future covariates only, not static variables`);
  const names = (record: object) => Object.keys(record).sort();
  return {
    target: task.history,
    future: names(cov.future).map((name) => {
      const v = numeric(model, cov.future[name], name);
      if (v.length !== n + task.horizon)
        throw new ModelInputError(`future variable '${name}' has ${v.length} values; expected history + horizon = ${n + task.horizon}`);
      return v;
    }),
    past: names(cov.hist).map((name) => {
      const v = numeric(model, cov.hist[name], name);
      if (v.length !== n) throw new ModelInputError(`historical variable '${name}' has ${v.length} values; expected the history's ${n}`);
      return v;
    }),
  };
}

/**
 * Tasks grouped so one network call holds sequences of one layout: the same horizon and the same
 * covariate names (series never interact: each attends only to its own tokens).
 */
export function layoutGroups(model: string, tasks: readonly ForecastTask[]): { horizon: number; indices: number[]; inputs: MoiraiInput[] }[] {
  const groups = new Map<string, { horizon: number; indices: number[]; inputs: MoiraiInput[] }>();
  tasks.forEach((task, i) => {
    const input = moiraiInput(model, task);
    const cov = task.covariates;
    const key = `${task.horizon}|${cov ? Object.keys(cov.future).sort().join(',') : ''}|${cov ? Object.keys(cov.hist).sort().join(',') : ''}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { horizon: task.horizon, indices: [], inputs: [] }));
    group.indices.push(i);
    group.inputs.push(input);
  });
  return [...groups.values()];
}
