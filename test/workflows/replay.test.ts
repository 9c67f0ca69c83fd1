/**
 * Upgrades keep running jobs alive: today's job workflow replays the recorded history of every
 * job shape (test/fixtures/workflow-histories/, `npm run record-histories`), so a change that
 * would wedge a running job fails here first. A deliberate reorder of its commands shows the
 * check at work, and the same reorder behind `patched()` shows how such a change ships
 * (docs/decisions/055-workflow-changes-ship-behind-patches.md).
 */
import { DeterminismViolationError } from '@temporalio/workflow';
import { afterAll, describe, expect, test } from 'vitest';
import { JOB_WORKFLOW_SOURCE } from '../../activities/job-worker.ts';
import { recordedHistories, replayFailures } from './histories.ts';
import { REORDER_PATCH, summaryBeforeChunks, todaysWorkflow, writeVariant } from './workflow-variants.ts';

const histories = recordedHistories();
/** The job workflow's own histories: a variant replaces its file alone, so it replays these. */
const jobHistories = histories.filter((h) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name === 'forecastJob');
const variants: { remove(): void }[] = [];
afterAll(() => variants.forEach((variant) => variant.remove()));

/** The shapes every release's recording covers: the list, by file name. */
const SHAPES = ['stable-completed', 'beta-completed', 'cancelled', 'continued-as-new-run1', 'continued-as-new-run3', 'chunk-retried-after-worker-died'];

describe('the recorded histories of the job workflow', () => {
  test('cover every job shape', () => {
    const names = jobHistories.map((h) => h.workflowId);
    expect(SHAPES.filter((shape) => !names.some((name) => name.includes(shape)))).toEqual([]);
  });

  test("replay under today's workflow code", async () => {
    expect(await replayFailures({ workflowsPath: JOB_WORKFLOW_SOURCE }, histories)).toEqual({});
  }, 120_000);

  test('fail to replay when the workflow reorders its commands: CI stops the change', async () => {
    const reordered = writeVariant('reordered', summaryBeforeChunks(todaysWorkflow()));
    variants.push(reordered);
    const failures = await replayFailures({ workflowsPath: reordered.path }, jobHistories);
    // Every job that ran a chunk meets the summary where its history has the chunk.
    const ranChunks = jobHistories.filter((h) => h.history.events?.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runChunk'));
    expect(Object.keys(failures).sort()).toEqual(ranChunks.map((h) => h.workflowId).sort());
    for (const error of Object.values(failures)) expect(error).toBeInstanceOf(DeterminismViolationError);
  }, 120_000);

  test('replay when the same reorder ships behind patched()', async () => {
    const patched = writeVariant('patched', summaryBeforeChunks(todaysWorkflow(), REORDER_PATCH));
    variants.push(patched);
    expect(await replayFailures({ workflowsPath: patched.path }, jobHistories)).toEqual({});
  }, 120_000);
});
