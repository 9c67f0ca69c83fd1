import type { M4Series } from '../../../datasets/m4.ts';
import { conformalForecast } from '../../../models/numerics/conformal.ts';
import type { ConformalSettings, ForecastOutput, ForecastTask, GlobalModel, LocalModel, ModelSettings } from '../../../models/contract/model-interface.ts';
import { peerLabel, type Peer, type PeerResults } from '../peer-reference.ts';
import { fallbackScore, invalidOutput, QUANTILE_GRID, score, summarize, type SeriesScore, type Summary } from './scoring.ts';

/** Running a model over an M4 set, one series at a time or (a global model) all at once, and the peers' results summed up alike. */

/** How the benches load models: no model folder (the models that need no exported weights), one thread. */
export const BENCH_MODEL_SETTINGS: ModelSettings = { modelsDir: '', onnxThreads: 1 };

export type Loaded = { readonly model: LocalModel } | { readonly global: GlobalModel } | { readonly unavailable: string };

export interface ModelSpec {
  /** Season length handed to the model for a series. */
  readonly seasonLength: (s: M4Series) => number;
  /** Every seasonal period, for a model that takes several (mstl). */
  readonly seasonLengths?: (s: M4Series) => number[];
  readonly load: () => Promise<Loaded>;
  /** What the model reads beyond its season (model_config settings, e.g. aarima's approximation). */
  readonly options?: Pick<ForecastTask, 'options'>;
  /** Each peer's method this model is measured against, by peer name ("R", "statsforecast"). */
  readonly peers?: Readonly<Record<string, string>>;
}

function progress(label: string): (done: number, total: number) => void {
  const start = Date.now();
  let last = start;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 2000) return;
    last = now;
    process.stderr.write(`[${label}] ${done}/${total} series, ${((now - start) / 1000).toFixed(1)}s\n`);
  };
}

export function runModel(
  label: string,
  model: LocalModel,
  spec: ModelSpec,
  series: readonly M4Series[],
  fallback: Map<string, SeriesScore>,
  conformal?: ConformalSettings,
): Summary {
  const scores: SeriesScore[] = [];
  const ms: number[] = [];
  const cpuMs: number[] = [];
  const errors: string[] = [];
  const tick = progress(label);
  for (let i = 0; i < series.length; i++) {
    const s = series[i];
    const task: ForecastTask = {
      history: s.train,
      horizon: s.horizon,
      quantiles: QUANTILE_GRID,
      seasonLength: spec.seasonLength(s),
      ...(spec.seasonLengths && { seasonLengths: spec.seasonLengths(s) }),
      ...spec.options,
    };
    let out: ForecastOutput | undefined;
    let error: string | null = null;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    try {
      // As the model threads run it (engine/threads/model-thread.ts).
      out = conformal ? conformalForecast((t) => model.forecast(t), task, conformal.windows) : model.forecast(task);
    } catch (e) {
      error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    }
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const dc = process.cpuUsage(c0);
    cpuMs.push((dc.user + dc.system) / 1000);
    error ??= invalidOutput(out, s.horizon, QUANTILE_GRID.length);
    if (error !== null) {
      errors.push(`${s.id}: ${error}`);
      scores.push(fallbackScore(s, fallback));
    } else {
      scores.push(score(s, out!));
    }
    tick(i + 1, series.length);
  }
  return summarize(label, scores, ms, cpuMs, errors);
}

/**
 * The tasks of a global model's run: M4 series share no calendar (the file's `ds` is synthetic),
 * so every series gets an index ending at the same instant.
 */
export function globalTasks(series: readonly M4Series[], spec: Pick<ModelSpec, 'seasonLength' | 'seasonLengths'>): ForecastTask[] {
  const end = Date.UTC(2020, 0, 6);
  const stepMs = series[0].seasonLength === 24 ? 3_600_000 : 7 * 86_400_000;
  return series.map((s, i) => ({
    history: s.train,
    horizon: s.horizon,
    quantiles: QUANTILE_GRID,
    seasonLength: spec.seasonLength(s),
    ...(spec.seasonLengths && { seasonLengths: spec.seasonLengths(s) }),
    seriesIndex: i,
    times: Float64Array.from({ length: s.train.length + s.horizon }, (_, k) => end - (s.train.length - 1 - k) * stepMs),
  }));
}

/**
 * A global model fits all series at once: one call, whose wall and CPU time are shared out
 * evenly per series. M4 series share no calendar (the file's `ds` is synthetic), so every series
 * gets an index ending at the same instant: the model may learn from every series' whole history,
 * as the M4 global methods did, and trains one model.
 */
export async function runGlobal(
  label: string,
  model: GlobalModel,
  spec: ModelSpec,
  series: readonly M4Series[],
  fallback: Map<string, SeriesScore>,
): Promise<Summary & { seconds: number; cpuSeconds: number }> {
  const tasks = globalTasks(series, spec);
  process.stderr.write(`[${label}] fitting one model on ${series.length} series...\n`);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let outputs: ForecastOutput[] | undefined;
  let failure: string | null = null;
  try {
    outputs = await model.forecastBatch(tasks, []);
  } catch (e) {
    failure = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const dc = process.cpuUsage(c0);
  const cpuSeconds = (dc.user + dc.system) / 1e6;
  const scores: SeriesScore[] = [];
  const errors: string[] = [];
  series.forEach((s, i) => {
    const error = failure ?? invalidOutput(outputs?.[i], s.horizon, QUANTILE_GRID.length);
    if (error !== null) {
      errors.push(`${s.id}: ${error}`);
      scores.push(fallbackScore(s, fallback));
    } else scores.push(score(s, outputs![i]));
  });
  const perSeries = series.map(() => (seconds * 1000) / series.length);
  const cpuPerSeries = series.map(() => (cpuSeconds * 1000) / series.length);
  return { ...summarize(label, scores, perSeries, cpuPerSeries, errors), seconds, cpuSeconds };
}

export function summarizePeer(peer: Peer, method: string, results: PeerResults, series: readonly M4Series[], fallback: Map<string, SeriesScore>): Summary {
  const scores: SeriesScore[] = [];
  const ms: number[] = [];
  const cpuMs: number[] = [];
  const errors: string[] = [];
  for (const s of series) {
    const r = results[method].get(s.id);
    let error: string | null = null;
    if (!r) error = `missing from ${peer.name} output`;
    else if (!r.ok) error = r.error;
    else error = invalidOutput(r, s.horizon, QUANTILE_GRID.length);
    if (r?.seconds !== undefined) ms.push(r.seconds * 1000);
    if (r?.cpuSeconds !== undefined) cpuMs.push(r.cpuSeconds * 1000);
    if (error !== null) {
      errors.push(`${s.id}: ${error}`);
      scores.push(fallbackScore(s, fallback));
    } else if (r?.ok) {
      scores.push(score(s, r));
    }
  }
  return summarize(peerLabel(peer, method), scores, ms, cpuMs, errors);
}
