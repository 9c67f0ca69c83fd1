/**
 * Runs one batch of forecasts for one model: what a model thread does with each message
 * (model-thread.ts), and what the event loop does itself for the few batches too small to be worth a
 * message (inline.ts). One implementation, so a forecast is the same wherever it runs.
 */
import { conformalForecast } from '../../models/numerics/conformal.ts';
import { modelEntry } from '../../models/contract/model-registry.ts';
import type { EnsembleModel } from '../../models/families/ensemble/ensemble.ts';
import { runMember, type MemberRun, type MemberRunner, type RunSettings } from '../../models/families/ensemble/members.ts';
import {
  ModelInputError,
  ModelUnavailableError,
  type ContextSeries,
  type ForecastOutput,
  type ForecastTask,
  type GlobalBatchOptions,
  type GlobalModel,
  type LocalModel,
  type ModelSettings,
} from '../../models/contract/model-interface.ts';

export interface ThreadBatch {
  model: string;
  tasks: ForecastTask[];
  /** Set for global models: the request's `only_as_context` series. */
  context?: ContextSeries[];
  options?: GlobalBatchOptions;
}

/** One ensemble member's share of a request (a local member's) or all of it (a global member's), with the windows to run. */
export interface MemberBatch {
  member: string;
  tasks: readonly ForecastTask[];
  cuts: readonly number[][];
  context: readonly ContextSeries[];
  settings: RunSettings;
}

/**
 * A task's forecast or failure, with the seconds the model spent on it (a global model's batch
 * shared out evenly). A forecast of a model run by ONNX Runtime names the execution provider. A
 * model that cannot run here (ModelUnavailableError) is `unavailable`, with its operator's detail.
 */
export type ThreadResult = (
  | { ok: true; mean: Float64Array; quantiles: Float64Array[]; executionProvider?: string }
  | { ok: false; inputError: boolean; message: string; unavailable?: { operatorDetail: string } }
) & {
  seconds: number;
};

/** The models one thread (or the event loop) has loaded, by name: each is loaded once. */
export class LoadedModels {
  private readonly loaded = new Map<string, Promise<LocalModel | GlobalModel>>();

  constructor(private readonly settings: ModelSettings) {}

  /** Whether this model was loaded here (or is loading). */
  holds(name: string): boolean {
    return this.loaded.has(name);
  }

  load(name: string): Promise<LocalModel | GlobalModel> {
    let model = this.loaded.get(name);
    if (!model) {
      const entry = modelEntry(name);
      if (entry?.loadLocal) model = entry.loadLocal();
      else if (entry?.loadGlobal) model = entry.loadGlobal(this.settings);
      else throw new Error(`model ${name} has no implementation on this server`);
      this.loaded.set(name, model);
    }
    return model;
  }
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const failure = (err: unknown, seconds: number): ThreadResult => ({
  ok: false,
  inputError: err instanceof ModelInputError,
  message: messageOf(err),
  ...(err instanceof ModelUnavailableError && { unavailable: { operatorDetail: err.operatorDetail } }),
  seconds,
});
const success = (out: ForecastOutput, seconds: number, executionProvider?: string | null): ThreadResult => ({
  ok: true,
  mean: out.mean,
  quantiles: out.quantiles,
  ...(executionProvider && { executionProvider }),
  seconds,
});
const since = (start: number) => (performance.now() - start) / 1000;

/** Every task of a local model, in order, each failing on its own. */
export function runLocalBatch(model: LocalModel, tasks: readonly ForecastTask[]): ThreadResult[] {
  // A backtest's kept fits, by series and refit date: one batch holds a series' dates in order.
  const fits = new Map<string, unknown>();
  const forecast = (task: ForecastTask): ForecastOutput => {
    if (!task.refit || !model.reuse) return model.forecast(task);
    const key = `${task.seriesIndex}@${task.refit.fcd}`;
    if (!fits.has(key)) fits.set(key, model.reuse.fit({ ...task, history: task.refit.history, refit: undefined }));
    return model.reuse.forecast(fits.get(key), task);
  };
  return tasks.map((task) => {
    const start = performance.now();
    try {
      const out = task.conformal ? conformalForecast(forecast, task, task.conformal.windows) : forecast(task);
      return success(out, since(start));
    } catch (err) {
      return failure(err, since(start));
    }
  });
}

/** A member's share as a thread hands it back: its run, or the message of the model's own failure. */
export type MemberShare = { run: MemberRun } | { failure: string };

/**
 * Runs an ensemble member's batch where it lands (a model thread), as the ensemble would run it
 * itself. A model's failure comes back as a value, so that only the thread's own (stopped,
 * cancelled) rejects.
 */
export async function runMemberBatch(models: LoadedModels, batch: MemberBatch): Promise<MemberShare> {
  try {
    const model = await models.load(batch.member);
    return { run: await runMember({ name: batch.member, model }, batch.tasks, batch.cuts, batch.context, batch.settings) };
  } catch (err) {
    return { failure: messageOf(err) };
  }
}

const runsMembers = (model: LocalModel | GlobalModel): model is EnsembleModel => 'forecastWith' in model;

/**
 * Runs a batch on the models loaded here. With `runner`, an ensemble hands its members' work to
 * it (the model threads) and combines what comes back here.
 */
export async function runBatch(models: LoadedModels, batch: ThreadBatch, runner?: MemberRunner): Promise<ThreadResult[]> {
  const model = await models.load(batch.model);
  if (!('forecastBatch' in model)) return runLocalBatch(model, batch.tasks);
  const start = performance.now();
  const share = () => since(start) / Math.max(1, batch.tasks.length);
  try {
    const outputs =
      runner && runsMembers(model)
        ? await model.forecastWith(batch.tasks, batch.context ?? [], batch.options ?? {}, runner)
        : await model.forecastBatch(batch.tasks, batch.context ?? [], batch.options);
    const seconds = share();
    const provider = model.executionProvider?.();
    return outputs.map((out) => success(out, seconds, provider));
  } catch (err) {
    // A global model fails as a whole: every task reports the same cause.
    const seconds = share();
    return batch.tasks.map(() => failure(err, seconds));
  }
}
