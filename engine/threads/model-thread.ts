/**
 * Worker-thread entry: runs models off the event loop. A call carries a batch of tasks for one
 * model, so that messaging costs little next to fitting: a share of a local model's tasks, a
 * global model's whole request, or an ensemble member's share of its request (MemberBatch). The
 * model settings arrive in workerData.
 */
import { workerData } from 'node:worker_threads';
import type { ModelSettings } from '../../models/contract/model-interface.ts';
import { LoadedModels, runBatch, runMemberBatch, type MemberBatch, type MemberShare, type ThreadBatch, type ThreadResult } from './batch.ts';

/** What every model thread is started with (pool.ts). */
export interface ThreadData {
  /** The module the bootstrap loads: this one. */
  taskModule: string;
  models: ModelSettings;
}

const models = new LoadedModels((workerData as ThreadData).models);

export default function runThreadBatch(batch: ThreadBatch | MemberBatch): Promise<ThreadResult[] | MemberShare> {
  return 'member' in batch ? runMemberBatch(models, batch) : runBatch(models, batch);
}
