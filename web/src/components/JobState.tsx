import { progressText } from '../format.ts';
import type { JobError, JobStatusName, Progress } from '../types.ts';

/** A job's status as a badge, with a progress bar while it runs and the reason once it failed. */
export function JobState({ job }: { job: { status: JobStatusName; progress?: Progress | null; error?: JobError } }) {
  const { status, progress, error } = job;
  const fraction = progress?.total ? progress.done / progress.total : 0;
  return (
    <span class="job-state">
      <span class={`badge ${status}`}>{status === 'failed' && error ? `failed: ${error.code}` : status.replace('_', ' ')}</span>
      {status === 'in_progress' && (
        <span class="progress" title={progressText(progress)}>
          <progress max={1} value={fraction} /> {progressText(progress)}
        </span>
      )}
      {status === 'failed' && error && <span class="muted small"> {error.message}</span>}
    </span>
  );
}
