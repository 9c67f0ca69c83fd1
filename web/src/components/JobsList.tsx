import { useState } from 'preact/hooks';
import { ApiError, getJson, request } from '../api.ts';
import { shortId } from '../format.ts';
import { usePolling } from '../polling.ts';
import { jobHref } from '../route.ts';
import { showInstant } from '../time.ts';
import type { JobSummary } from '../types.ts';
import { JobState } from './JobState.tsx';

/** How often the list is refreshed: live progress without flooding the rate limit. */
const REFRESH_MS = 1500;
/** Jobs shown at first and added by "Show more": each listed job's state is asked of Temporal at every refresh. */
const PAGE = 50;

/** The caller's jobs, newest first, refreshed live: status, progress, and cancel for running ones. */
export function JobsList() {
  const [jobs, setJobs] = useState<JobSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [limit, setLimit] = useState(PAGE);

  const refresh = async () => {
    try {
      setJobs((await getJson<{ jobs: JobSummary[] }>(`/forecast-jobs?limit=${limit}`)).jobs);
      setError(null);
    } catch (err) {
      setError(err instanceof ApiError ? err.describe() : (err as Error).message);
    }
  };
  usePolling(refresh, REFRESH_MS, true, [limit]);

  const cancel = async (job: JobSummary) => {
    const prefix = job.kind === 'beta' ? '/v1-beta/forecast-jobs' : '/forecast-jobs';
    let refused: string | null = null;
    try {
      await request(`${prefix}/${job.job_id}/cancel`, { method: 'POST' });
    } catch (err) {
      refused = err instanceof ApiError ? err.describe() : (err as Error).message;
    }
    await refresh();
    // Shown after the refresh, which clears the list's own errors: a refused cancel stays in view.
    if (refused) setError(refused);
  };

  return (
    <section>
      <h2>Jobs</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {jobs === null ? (
        <p class="muted">Loading…</p>
      ) : jobs.length === 0 ? (
        <p class="muted">
          No jobs yet. Submit a backtest from the <a href="#/playground">playground</a>.
        </p>
      ) : (
        <table class="jobs">
          <thead>
            <tr>
              <th>created</th>
              <th>job</th>
              <th>kind</th>
              <th>model</th>
              <th>series</th>
              <th>forecasts</th>
              <th>status</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr data-job-id={job.job_id} data-status={job.status}>
                <td>{showInstant(Date.parse(job.created_at), true)}</td>
                <td>
                  <a href={jobHref(job.kind, job.job_id)}>{shortId(job.job_id)}</a>
                </td>
                <td>{job.kind}</td>
                <td>{job.model}</td>
                <td class="number">{job.series ?? '–'}</td>
                <td class="number">{job.forecasts ?? '–'}</td>
                <td>
                  <JobState job={job} />
                </td>
                <td>
                  {job.status === 'in_progress' && (
                    <button type="button" class="cancel" onClick={() => cancel(job)}>
                      Cancel
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {jobs !== null && jobs.length === limit && (
        <button type="button" class="link" onClick={() => setLimit(limit + PAGE)}>
          Show more
        </button>
      )}
    </section>
  );
}
