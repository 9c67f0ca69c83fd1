import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Client, HistoryAndWorkflowId } from '@temporalio/client';
import proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root.js';
import { Worker } from '@temporalio/worker';
import type { WorkflowCode } from '../../activities/job-worker.ts';

/**
 * The job workflow's recorded histories and their replay. Each folder under HISTORIES_DIR holds
 * one release's jobs, recorded by `npm run record-histories` (or exported from a running
 * deployment with `temporal workflow show --output json`). A file is one run of one job.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
export const HISTORIES_DIR = path.join(ROOT, 'test/fixtures/workflow-histories');

/**
 * Temporal's JSON form of a history, the one its CLI writes. The SDK's own converters fail where
 * npm installs two copies of protobufjs (its `type must be a Type`), so these take the JSON codec
 * from the copy that @temporalio/proto itself loads.
 */
const protoRequire = createRequire(createRequire(import.meta.url).resolve('@temporalio/proto'));
const protojson: { toJson(type: unknown, message: unknown): unknown; fromJson(type: unknown, json: unknown): unknown } =
  protoRequire('protobufjs/ext/protojson');
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType('temporal.api.history.v1.History');
type History = proto.temporal.api.history.v1.IHistory;

export const historyToJSON = (history: History): unknown => protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history));
export const historyFromJSON = (json: unknown): History => protojson.fromJson(historyType, json) as History;

/** Every recorded history, named `<release>/<file>` as its workflow id. */
export function recordedHistories(): { workflowId: string; history: History }[] {
  if (!fs.existsSync(HISTORIES_DIR)) return [];
  return fs
    .readdirSync(HISTORIES_DIR, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ workflowId: file, history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8'))) }));
}

/** Replays the histories with the given workflow code: the error of each that fails, by its name. */
export async function replayFailures(code: WorkflowCode, histories: HistoryAndWorkflowId[]): Promise<Record<string, Error>> {
  const failures: Record<string, Error> = {};
  for await (const result of Worker.runReplayHistories(code, histories)) {
    if (result.error) failures[result.workflowId] = result.error;
  }
  return failures;
}

export async function firstRunId(client: Client, workflowId: string): Promise<string> {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  const id = raw.workflowExecutionInfo?.firstRunId;
  if (!id) throw new Error(`job ${workflowId} has no first run id`);
  return id;
}

/** Every run of a workflow, first to last, following its continue-as-new links. */
export async function runHistories(client: Client, workflowId: string, firstRunId: string) {
  const runs = [];
  for (let runId: string | undefined = firstRunId; runId;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.push(history);
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}
