import type { ModelSettings } from '../models/types.ts';
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

  constructor(readonly settings: EngineSettings) {
    this.threads = new ModelThreads(settings.modelThreads, settings.models);
  }

  close(): Promise<void> {
    return this.threads.close();
  }
}
