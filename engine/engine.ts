import type { ModelSettings } from '../models/contract/model-interface.ts';
import { ModelThreads } from './threads/pool.ts';

/** What the engine is configured with (config.ts `engine`): the entry points pass it down. */
export interface EngineSettings {
  /** Worker threads that fit and run models. */
  readonly modelThreads: number;
  /** Where models find their exported weights, and ONNX Runtime's threads. */
  readonly models: ModelSettings;
  /** Where float data sources are registered. */
  readonly floatSourcesDir: string;
}

/**
 * The forecasting engine of one process: its settings and its model threads. The server and the
 * worker each make one and hand it to every call that forecasts; closing it stops the threads.
 */
export class Engine {
  readonly threads: ModelThreads;

  constructor(
    readonly settings: EngineSettings,
    threads?: ModelThreads,
  ) {
    this.threads = threads ?? new ModelThreads(settings.modelThreads, settings.models);
  }

  /**
   * This engine on the same threads, for work that `signal` cancels (a job chunk whose job was
   * cancelled or deleted): its batches are dropped from the queue, or their thread stopped.
   */
  cancellable(signal: AbortSignal): Engine {
    return new Engine(this.settings, this.threads.withSignal(signal));
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}
